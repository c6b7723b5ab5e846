// Finds a project's memories of a store (the `store_id` property the writer keeps from the
// attribute, graph_schema/scope_names.py): an unnamed case's scope starts from every memory of
// the stores its answer's search read (attribution/store_memories), by a seek here.
// $params: none
CREATE INDEX unit_store IF NOT EXISTS FOR (u:Unit) ON (u.project, u.store_id)
