package worker

import (
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/nexus-rpc/sdk-go/nexus"
	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/correspondence"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/formtask"
	"github.com/postbox/postbox/notification"
	"github.com/postbox/postbox/retention"
)

// names records what is registered on a worker.
type names []string

func (n *names) RegisterWorkflow(any) {}
func (n *names) RegisterWorkflowWithOptions(_ any, o workflow.RegisterOptions) {
	*n = append(*n, "workflow "+o.Name)
}
func (n *names) RegisterDynamicWorkflow(any, workflow.DynamicRegisterOptions) {}
func (n *names) RegisterActivity(fn any) {
	// As the SDK names a method value: the method's name.
	name := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	*n = append(*n, strings.TrimSuffix(name[strings.LastIndex(name, ".")+1:], "-fm"))
}
func (n *names) RegisterActivityWithOptions(_ any, o activity.RegisterOptions) {
	*n = append(*n, o.Name)
}
func (n *names) RegisterDynamicActivity(any, activity.DynamicRegisterOptions) {}
func (n *names) RegisterNexusService(*nexus.Service)                          {}

// Each queue group's workers register the activities formtask.ActivitiesOn puts on its queue, under the
// names the workflow schedules them by.
func TestEachGroupRegistersTheActivitiesOfItsQueue(t *testing.T) {
	want := map[string][]string{
		config.QueueFormTask: {"ChangePlace", "CheckAndArchive", "CheckAndProject", "DiscardRevision", "MarkSigningOverdue",
			"ReadTaskState", "RecordSignature", "ReturnToFilling", "WriteSignees",
			"workflow FormTask", "workflow " + formtask.TrashbinPurgeWorkflow},
		config.QueueValidation: {"RenderFormPrint", "RenderPrint"},
		config.QueueArchive:    {"KeepPartitions", "PurgeTrashbin", "workflow " + retention.WorkflowName},
		config.QueueEvents: {webhook.ActivityDeadLetter, webhook.ActivityDeliverEvents, webhook.ActivityDeliverNext, webhook.ActivityHandshake,
			webhook.ActivitySetStatus, "workflow " + webhook.SubscriptionWorkflow},
		config.QueueCorrespondence: {"CheckPrefill", "CreateBatch", "CreatePrefilled", "DropPrefill", "MarkOverdue", "MarkTaskOverdue",
			"PurgeBatch", "workflow " + correspondence.TaskDueWorkflowName, "workflow " + correspondence.PrefillWorkflowName,
			"workflow " + correspondence.WorkflowName},
		config.QueueNotification: {"GiveUp", "SendBatch", "workflow " + notification.WorkflowName},
	}
	for _, g := range config.QueueGroups {
		var got names
		register(&got, g, &formtask.Activities{}, Options{Deliveries: &webhook.Deliveries{}, Correspondence: &correspondence.Activities{},
			Notification: &notification.Activities{}})
		sort.Strings(got)
		assert.Equal(t, want[g], []string(got), g)
	}
}
