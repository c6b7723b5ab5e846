// Walks a project's operations that rewrote a memory (rewrites_memory = true) in time order
// (audit degraded_updates): the writer keeps the flag (cypher/ingest/mark_rewrites.cypher), so a
// page reads the operations that can be rows, not every operation of the project.
// $params: none
CREATE INDEX operation_rewrites IF NOT EXISTS
FOR (o:Operation) ON (o.project, o.rewrites_memory, o.ts)
