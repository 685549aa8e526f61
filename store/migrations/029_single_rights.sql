-- A single right (one action on one service edition) is delegated as a role of its own that gives only
-- that right: one definition per service edition and action, of type SingleRight, shared by every
-- reportee and never listed among the role definitions (package access, DelegateRoles). So the views of
-- roles, rights and delegations, the rights cache and the removal of a right (which takes a role that
-- gives only it) work for single rights as they do for roles. (The index that keeps one definition per
-- right is built by 035_concurrent_indexes.sql.)

ALTER TABLE authorization_audit DROP CONSTRAINT authorization_audit_action_check;
ALTER TABLE authorization_audit ADD CONSTRAINT authorization_audit_action_check CHECK (action IN ('DelegateRole', 'DelegateRight',
    'DeleteRole', 'DeleteRight', 'CreateRoleDefinition', 'UpdateRoleDefinition', 'DeleteRoleDefinition'));
