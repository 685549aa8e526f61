package worker

import (
	"sort"
	"testing"

	"github.com/nexus-rpc/sdk-go/nexus"
	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/formtask"
)

// names records what is registered on a worker.
type names []string

func (n *names) RegisterWorkflow(any) {}
func (n *names) RegisterWorkflowWithOptions(_ any, o workflow.RegisterOptions) {
	*n = append(*n, "workflow "+o.Name)
}
func (n *names) RegisterDynamicWorkflow(any, workflow.DynamicRegisterOptions) {}
func (n *names) RegisterActivity(any)                                         {}
func (n *names) RegisterActivityWithOptions(_ any, o activity.RegisterOptions) {
	*n = append(*n, o.Name)
}
func (n *names) RegisterDynamicActivity(any, activity.DynamicRegisterOptions) {}
func (n *names) RegisterNexusService(*nexus.Service)                          {}

// Each queue group's workers register the activities formtask.ActivityTaskQueues puts on its queue; the
// formtask workers register everything, for runs begun before the split.
func TestEachGroupRegistersTheActivitiesOfItsQueue(t *testing.T) {
	want := map[string][]string{
		config.QueueFormTask: {formtask.ActivityArchive, formtask.ActivityChangePlace, formtask.ActivityCheckAndArchive, formtask.ActivityCheckAndProject, formtask.ActivityCheckAttachments, formtask.ActivityDiscardRevision,
			formtask.ActivityProjectState, formtask.ActivityPurgeTrashbin, formtask.ActivityReadTaskState, formtask.ActivityRenderFormPrint, formtask.ActivityRenderPrint,
			formtask.ActivityValidateForms, "workflow FormTask", "workflow " + formtask.TrashbinPurgeWorkflow},
		config.QueueValidation: {formtask.ActivityCheckAttachments, formtask.ActivityRenderFormPrint, formtask.ActivityRenderPrint,
			formtask.ActivityValidateForms},
		config.QueueArchive: {formtask.ActivityArchive, formtask.ActivityChangePlace, formtask.ActivityProjectState, formtask.ActivityPurgeTrashbin},
		config.QueueEvents: {webhook.ActivityDeadLetter, webhook.ActivityDeliverEvents, webhook.ActivityDeliverNext, webhook.ActivityHandshake,
			webhook.ActivitySetStatus, "workflow " + webhook.SubscriptionWorkflow},
	}
	for _, g := range config.QueueGroups {
		var got names
		register(&got, g, &formtask.Activities{}, &webhook.Deliveries{})
		sort.Strings(got)
		assert.Equal(t, want[g], []string(got), g)
	}
}
