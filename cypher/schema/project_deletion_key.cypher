// At most one deletion marker per project (DELETE /project), found by a seek on project: every
// request that opens a session on a project asks whether it is being deleted.
// $params: none
CREATE CONSTRAINT project_deletion_key IF NOT EXISTS
FOR (d:ProjectDeletion) REQUIRE d.project IS UNIQUE
