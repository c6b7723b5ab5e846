// Finds a project's units of a conversation (the `conversation_id` property the writer keeps from the
// attribute, graph_schema/scope_names.py): the scope of a case whose lineage names its conversation
// (attribution/scope_messages) is a seek here, not a read of every unit of the project.
// $params: none
CREATE INDEX unit_conversation IF NOT EXISTS FOR (u:Unit) ON (u.project, u.conversation_id)
