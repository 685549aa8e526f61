package formtask

import (
	"context"
	"errors"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// Call is what every change of an existing form task starts from: the message as the caller sees it, its
// service, the task and the caller.
type Call struct {
	Message store.Message
	Service store.ServiceDetail
	Task    Task
	Caller  Caller
	// Conditional says the change carries an If-Match, which Task.Revision and Message were read for.
	Conditional bool
}

// OnlyFormTask refuses, for a message m of another type, what only a form task has or does; why ends the
// refusal's detail.
func OnlyFormTask(m store.Message, why string) error {
	if m.Type == store.TypeFormTask {
		return nil
	}
	return refuse(NotAFormTask, "message %s is a %s%s", m.MessageID, m.Type, why)
}

// Begin is the call of a change of message id, which p with rights sees in reportee's mailbox as visible
// loads it: refused unless it is a form task. A conditional change (If-Match) reads the task's revision
// before the message, so a change between the two reads makes the workflow's check fail, never pass; the
// message is read once.
func (s *Service) Begin(ctx context.Context, reportee int64, p identity.Principal, rights identity.RightSet, id string,
	conditional bool, visible func(context.Context) (store.Message, error)) (Call, error) {
	var revision int64
	if conditional {
		var err error
		if revision, err = s.store.LastPromotedRevision(ctx, id); err != nil {
			return Call{}, err
		}
	}
	m, err := visible(ctx)
	if err != nil {
		return Call{}, err
	}
	if err := OnlyFormTask(m, ", not a form task"); err != nil {
		return Call{}, err
	}
	svc, err := s.store.GetService(ctx, m.ServiceCode, m.ServiceEdition)
	if err != nil {
		return Call{}, err
	}
	task := TaskOf(m, svc, reportee)
	task.Revision = revision // the state a workflow started now begins with
	return Call{Message: m, Service: svc, Task: task, Caller: CallerOf(p, rights, m.Service()), Conditional: conditional}, nil
}

// Expectation is what the task's workflow must find when it makes a conditional change (nil for another):
// the revision and status the caller's If-Match was checked against.
func (c Call) Expectation() *Expectation {
	if !c.Conditional {
		return nil
	}
	return &Expectation{Revision: c.Task.Revision, Status: c.Message.Status}
}

// Start creates a form task of the service content names in reportee's mailbox, for p with rights: empty,
// or with content and moved as complete and sign say (as a change of an existing task would be). It
// returns the task as created, and the outcome of its first change.
func (s *Service) Start(ctx context.Context, reportee int64, p identity.Principal, rights identity.RightSet, content Content,
	complete, sign bool) (store.Message, Result, error) {
	if content.ServiceCode == "" || content.ServiceEdition == nil {
		return store.Message{}, Result{}, refuse(BadInput, "ServiceCode and ServiceEdition are required")
	}
	svc, err := s.store.GetService(ctx, content.ServiceCode, *content.ServiceEdition)
	if errors.Is(err, store.ErrNotFound) || (err == nil && svc.ServiceType != store.TypeFormTask) {
		return store.Message{}, Result{}, refuse(BadInput, "there is no form task service %s edition %d", content.ServiceCode, *content.ServiceEdition)
	}
	if err != nil {
		return store.Message{}, Result{}, err
	}
	now := clock.Now()
	if err := ServiceOpen(svc, now); err != nil {
		return store.Message{}, Result{}, err
	}
	forms, attachments, err := RevisionContent(svc, content)
	if err != nil {
		return store.Message{}, Result{}, err
	}
	id, res, err := s.Create(ctx, reportee, svc, CallerOf(p, rights, store.ServiceKey{Code: svc.ServiceCode, Edition: svc.ServiceEdition}),
		Submission{Complete: complete, Sign: sign, Forms: forms, Attachments: attachments, Signer: PersonSigner(p)})
	if err != nil {
		return store.Message{}, Result{}, err
	}
	created := store.Message{MessageSummary: store.MessageSummary{MessageID: id, Subject: svc.ServiceName, Type: store.TypeFormTask,
		ServiceOwner: svc.ServiceOwnerName, ServiceCode: svc.ServiceCode, ServiceEdition: svc.ServiceEdition,
		CreatedDate: clock.Local(now), LastChangedDateTime: clock.Local(now)}}
	return created, res, nil
}

// NewAttachment checks an attachment about to be streamed into the task: its file name, its type among
// the service's rules, its size (-1 while unknown) and the count of its type the task would then hold. It
// returns the type's rule, whose MaxFileSize bounds the stream.
func (c Call) NewAttachment(fileName, attachmentType string, size int64) (store.AttachmentRule, error) {
	var rule store.AttachmentRule
	v := CheckFileName(fileName)
	if v == nil {
		rule, v = AttachmentRuleOf(c.Service, attachmentType)
	}
	if v == nil {
		v = StreamChecks(rule, fileName, size)
	}
	if v == nil {
		count := 0
		for _, a := range c.Message.Attachments {
			if a.AttachmentType == rule.AttachmentTypeName {
				count++
			}
		}
		v = CheckAttachmentCount(rule, count+1, false)
	}
	if v != nil {
		return rule, v.Refusal("")
	}
	return rule, nil
}

// SubForm is the sub-form of a request's body, checked against the task's service.
func (c Call) SubForm(body FormBody) (RevisionForm, error) {
	if v := CheckSubFormType(body.Type); v != nil {
		return RevisionForm{}, v.Refusal("")
	}
	return RevisionFormOf(c.Service, body, "body")
}

// SubFormTarget is the form a PUT of a sub-form to formID writes: that sub-form when the task has it
// (exists), else none (0: the sub-form is added). The main form is refused.
func (c Call) SubFormTarget(formID int64) (target int64, exists bool, err error) {
	for _, f := range c.Message.Forms {
		if f.ID == formID {
			if v := CheckSubFormTarget(f.ID, f.Type); v != nil {
				return 0, false, v.Refusal("")
			}
			return formID, true, nil
		}
	}
	return 0, false, nil
}
