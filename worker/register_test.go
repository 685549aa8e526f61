package worker

import (
	"sort"
	"testing"

	"github.com/nexus-rpc/sdk-go/nexus"
	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/postbox/postbox/activities"
	"github.com/postbox/postbox/config"
	"github.com/postbox/postbox/events/webhook"
	"github.com/postbox/postbox/workflows"
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

// Each queue group's workers register the activities workflows.ActivityTaskQueues puts on its queue; the
// formtask workers register everything, for runs begun before the split.
func TestEachGroupRegistersTheActivitiesOfItsQueue(t *testing.T) {
	want := map[string][]string{
		config.QueueFormTask: {workflows.ActivityArchive, workflows.ActivityChangePlace, workflows.ActivityCheckAndArchive, workflows.ActivityCheckAndProject, workflows.ActivityCheckAttachments, workflows.ActivityDiscardRevision,
			workflows.ActivityProjectState, workflows.ActivityPurgeTrashbin, workflows.ActivityReadTaskState, workflows.ActivityRenderFormPrint, workflows.ActivityRenderPrint,
			workflows.ActivityValidateForms, "workflow FormTask", "workflow " + workflows.TrashbinPurgeWorkflow},
		config.QueueValidation: {workflows.ActivityCheckAttachments, workflows.ActivityRenderFormPrint, workflows.ActivityRenderPrint,
			workflows.ActivityValidateForms},
		config.QueueArchive: {workflows.ActivityArchive, workflows.ActivityChangePlace, workflows.ActivityProjectState, workflows.ActivityPurgeTrashbin},
		config.QueueEvents: {webhook.ActivityDeadLetter, webhook.ActivityDeliverEvents, webhook.ActivityDeliverNext, webhook.ActivityHandshake,
			webhook.ActivitySetStatus, "workflow " + webhook.SubscriptionWorkflow},
	}
	for _, g := range config.QueueGroups {
		var got names
		register(&got, g, &activities.Activities{}, &webhook.Deliveries{})
		sort.Strings(got)
		assert.Equal(t, want[g], []string(got), g)
	}
}
