// Finds a project's operations of a user (the `user_id` property the writer keeps from the
// attribute, graph_schema/scope_names.py): the scope of a case whose lineage names its user
// (attribution/scope_messages) is a seek here, not a read of every operation of the project.
// $params: none
CREATE INDEX operation_user IF NOT EXISTS FOR (o:Operation) ON (o.project, o.user_id)
