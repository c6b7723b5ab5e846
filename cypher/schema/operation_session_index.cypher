// Finds a project's operations of some sessions: the scope of a case whose lineage names
// sessions (attribution/scope_messages) is read by a seek here, not by reading every operation
// of the project.
// $params: none
CREATE INDEX operation_session IF NOT EXISTS FOR (o:Operation) ON (o.project, o.session_id)
