-- A task's signing deadline is kept in the read model from the moment it enters Signering, whether its
-- creator set it with the signees or the service's SigningDeadlineDays made it (from_service): a workflow
-- run that takes its state from the read model (formtask.UpdateResync) finds it there. The service's is
-- dropped when the task goes back to Utfylling, and made anew from its next completion.
ALTER TABLE task_signing_deadlines ADD COLUMN from_service boolean NOT NULL DEFAULT false;
