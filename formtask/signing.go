package formtask

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/postbox/postbox/clock"
	"github.com/postbox/postbox/formtask/taskstatus"
	"github.com/postbox/postbox/identity"
	"github.com/postbox/postbox/store"
)

// SigneeName names a signee as the filler writes it: a person by SocialSecurityNumber and LastName, an
// organization by OrganizationNumber (and Name, checked when given).
type SigneeName struct {
	SocialSecurityNumber string
	LastName             string
	OrganizationNumber   string
	Name                 string
}

// Signees returns the signees a task names.
func (s *Service) Signees(ctx context.Context, task Task) ([]TaskSignee, error) {
	return s.store.ListTaskSignees(ctx, task.MessageID)
}

// NamesSignee tells whether task names party a signee: on the task, or, for an organization, in a signing
// step of its service.
func (s *Service) NamesSignee(ctx context.Context, task Task, party int64) (bool, error) {
	return s.store.NamesSignee(ctx, task.MessageID, party)
}

// SigningDeadline is the signing deadline a task's signees were named with (a wall-clock time), nil for
// none (the service's SigningDeadlineDays then apply).
func (s *Service) SigningDeadline(ctx context.Context, task Task) (*time.Time, error) {
	return s.store.TaskSigningDeadline(ctx, task.MessageID)
}

// PutSignees makes names the task's signees, while it is in Utfylling, with its signing deadline (a
// wall-clock time after now; nil for the service's). Each must be a person whose last name matches, or an
// active organization, named once, and not the task's own party (which signs through a step of its own);
// a name that matches no one is refused as one that does not exist.
func (s *Service) PutSignees(ctx context.Context, task Task, caller Caller, names []SigneeName, deadline *time.Time) (Result, error) {
	if err := refusal(ctx, task, caller); err != nil {
		return Result{}, err
	}
	if len(names) > MaxSignees {
		return Result{}, refuse(BadInput, "a task names at most %d signees; the list has %d", MaxSignees, len(names))
	}
	if deadline != nil && !deadline.After(clock.Now()) {
		return Result{}, refuse(BadInput, "SigningDeadline must come after now")
	}
	ids := make([]int64, 0, len(names))
	for i, n := range names {
		id, err := s.signee(ctx, n)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				e.Detail = signeeField(i) + e.Detail
			}
			return Result{}, err
		}
		switch {
		case "r"+strconv.FormatInt(id, 10) == task.ReporteeID:
			return Result{}, refuse(BadInput, "%sthe task's own party signs it through the service's signing steps, not as a named signee", signeeField(i))
		case slices.Contains(ids, id):
			return Result{}, refuse(BadInput, "%sthe same signee is named twice", signeeField(i))
		}
		ids = append(ids, id)
	}
	return s.update(ctx, task, 0, UpdateSignees, SigneesInput{Caller: withLevel(caller, task), PartyIDs: ids, Deadline: deadline})
}

// signee finds the party n names.
func (s *Service) signee(ctx context.Context, n SigneeName) (int64, error) {
	switch {
	case n.SocialSecurityNumber != "" && n.OrganizationNumber == "":
		if !ssnPattern.MatchString(n.SocialSecurityNumber) || n.LastName == "" {
			return 0, refuse(BadInput, "a person is named by SocialSecurityNumber (11 digits) and LastName")
		}
		p, err := identity.NewStore(s.store.Queries).FindParty(ctx, n.SocialSecurityNumber)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (p.Kind != "Person" || !strings.EqualFold(strings.TrimSpace(p.LastName), strings.TrimSpace(n.LastName)))) {
			return 0, refuse(BadInput, "no person has this national identity number and last name")
		}
		return p.ID, err
	case n.OrganizationNumber != "" && n.SocialSecurityNumber == "":
		if !identity.OrganizationNumberPattern.MatchString(n.OrganizationNumber) {
			return 0, refuse(BadInput, "an organization is named by OrganizationNumber (9 digits)")
		}
		p, err := identity.NewStore(s.store.Queries).FindParty(ctx, n.OrganizationNumber)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (p.Kind != "Organization" ||
			(n.Name != "" && !strings.EqualFold(strings.TrimSpace(p.Name), strings.TrimSpace(n.Name))))) {
			return 0, refuse(BadInput, "no organization has this organization number and name")
		}
		if err == nil && p.Status != "" && p.Status != "Active" {
			return 0, refuse(BadInput, "organization %s is not active and cannot sign", p.OrganizationNumber)
		}
		return p.ID, err
	}
	return 0, refuse(BadInput, "name a person (SocialSecurityNumber and LastName) or an organization (OrganizationNumber)")
}

func signeeField(i int) string { return "Signees[" + strconv.Itoa(i) + "]: " }

// ssnPattern is the shape of a national identity number.
var ssnPattern = regexp.MustCompile(`^[0-9]{11}$`)

// SigningState is a task's signing as its readers see it: its steps with what each needs and has, the
// signatures (the voided ones too), its signees and the digest of its content now.
type SigningState struct {
	Steps         []StepState
	CurrentStep   int // 1-based; 0 when every step is signed or the task has none
	Signatures    []Signature
	Signees       []TaskSignee
	ContentDigest string
}

// StepState is one signing step: its rule, how many signatures it needs and how many it has.
type StepState struct {
	store.SigningStep
	Needed, Signed int
}

// Signing returns the signing of a task.
func (s *Service) Signing(ctx context.Context, task Task) (SigningState, error) {
	svc, err := s.store.GetService(ctx, task.ServiceCode, task.ServiceEdition)
	if err != nil {
		return SigningState{}, err
	}
	var st SigningState
	if st.Signees, err = s.store.ListTaskSignees(ctx, task.MessageID); err != nil {
		return st, err
	}
	if st.Signatures, err = s.store.ListSignatures(ctx, task.MessageID); err != nil {
		return st, err
	}
	if st.ContentDigest, err = s.store.ContentDigest(ctx, task.MessageID); err != nil {
		return st, err
	}
	var active []Signature
	for _, sig := range st.Signatures {
		if sig.VoidedAt == nil {
			active = append(active, sig)
		}
	}
	steps := signingSteps(svc, len(st.Signees))
	for i, step := range steps {
		n := 0
		for _, sig := range active {
			if sig.Step == i+1 {
				n++
			}
		}
		st.Steps = append(st.Steps, StepState{SigningStep: step, Needed: needed(step, len(st.Signees)), Signed: n})
	}
	if cur := currentStep(steps, len(st.Signees), active); cur < len(steps) && task.Status == taskstatus.Signing {
		st.CurrentStep = cur + 1
	}
	return st, nil
}

// Sign records signer's signature of a task in Signering as the named signee they are (or sign for);
// expect, when set, is the content digest they read. A signature repeated after the task archived answers
// as the archive did.
func (s *Service) Sign(ctx context.Context, task Task, signer Signer, expect string) (Result, error) {
	signer.RequiredLevel = task.RequiredSecurityLevel
	res, err := s.update(ctx, task, 0, UpdateSign, SignInput{Signer: signer, Expect: expect})
	var refused *Error
	if errors.As(err, &refused) && refused.Kind == Conflict && refused.Status == taskstatus.Archived {
		signatures, lerr := s.store.ListSignatures(ctx, task.MessageID)
		switch {
		case lerr != nil: // it cannot be told whether this is a repeat: an outage, not a refusal
			return Result{}, lerr
		case signedBy(signatures, signer):
			return Result{Outcome: OutcomeArchived, Status: taskstatus.Archived, ArchiveReference: refused.ArchiveReference}, nil
		}
	}
	return res, err
}

// signedBy tells whether s has a signature among signatures not voided: for the signee s signs for, or
// any when s names none. The one rule of a repeated signature, for Sign and RecordSignature.
func signedBy(signatures []Signature, s Signer) bool {
	for _, sig := range signatures {
		if sig.VoidedAt == nil && sig.SignerPartyID == s.PartyID && (s.OnBehalfOf == 0 || sig.OnBehalfOfPartyID == s.OnBehalfOf) {
			return true
		}
	}
	return false
}

// ReturnToFilling sends a task in Signering back to Utfylling, voiding its signatures.
func (s *Service) ReturnToFilling(ctx context.Context, task Task, caller Caller) (Result, error) {
	if err := refusal(ctx, task, caller); err != nil {
		return Result{}, err
	}
	return s.update(ctx, task, 0, UpdateReturnToFilling, ReturnInput{Caller: withLevel(caller, task)})
}
