// Walks a project's operations with no inputs or no outputs (idle = true, set by the writer:
// ingest/create_operations) in time order (audit idle_operations): a page reads the operations
// that can be rows, not every operation of the project. Every other operation lacks the
// property, so the index holds nothing for it and costs its write nothing.
// $params: none
CREATE INDEX operation_idle IF NOT EXISTS FOR (o:Operation) ON (o.project, o.idle, o.ts)
