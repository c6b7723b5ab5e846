// Finds a project's operations of a conversation (the `conversation_id` property the writer keeps from the
// attribute, graph_schema/scope_names.py): the scope of a case whose lineage names its conversation
// (attribution/scope_messages) is a seek here, not a read of every operation of the project.
// $params: none
CREATE INDEX operation_conversation IF NOT EXISTS FOR (o:Operation) ON (o.project, o.conversation_id)
