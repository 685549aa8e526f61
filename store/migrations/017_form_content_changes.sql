-- The forms and attachments of a form task in Utfylling are changed one at a time: a sub-form deleted, an
-- attachment deleted or given new content. Each is a revision like the others, applied by the task's
-- workflow; the target is the form or attachment it changes.
ALTER TABLE form_revisions DROP CONSTRAINT form_revisions_kind_check;
ALTER TABLE form_revisions ADD CONSTRAINT form_revisions_kind_check
    CHECK (kind IN ('Replace', 'SubForm', 'Attachment', 'DeleteForm', 'DeleteAttachment', 'ReplaceAttachment'));
ALTER TABLE form_revisions DROP CONSTRAINT form_revisions_check;
ALTER TABLE form_revisions ADD COLUMN target_attachment_id bigint;
ALTER TABLE form_revisions ADD CONSTRAINT form_revisions_target_check CHECK (
    (kind IN ('SubForm', 'DeleteForm') OR target_form_id IS NULL)
    AND (kind = 'DeleteForm') <= (target_form_id IS NOT NULL)
    AND (kind IN ('DeleteAttachment', 'ReplaceAttachment')) = (target_attachment_id IS NOT NULL));

-- The message audit entry of the change, written when the revision is promoted, in that transaction: who
-- asked is known to the API, the moment of the change to the promotion.
ALTER TABLE form_revisions ADD COLUMN audit jsonb;

ALTER TABLE message_audit DROP CONSTRAINT message_audit_action_check;
ALTER TABLE message_audit ADD CONSTRAINT message_audit_action_check CHECK (action IN ('Archive', 'Confirm', 'Delete', 'Restore',
    'DeleteForGood', 'Purge', 'PutSubForm', 'DeleteForm', 'AddAttachment', 'ReplaceAttachment', 'DeleteAttachment'));

-- The schema an attachment of a rule with is_xsd_validation_required must be valid against.
ALTER TABLE attachment_rules ADD COLUMN xsd text;
ALTER TABLE attachment_rules ADD CONSTRAINT attachment_rules_xsd_check CHECK (is_xsd_validation_required <= (xsd IS NOT NULL));
