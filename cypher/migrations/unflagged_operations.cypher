// Up to $batch operations stored before the writer kept rewrites_memory (the property is null),
// in any project of the store, grouped by project: the start-up backfill sets their flag with
// ingest/mark_rewrites, a project at a time, until none is left. On a store written by this
// version it finds none, and the label scan is the whole cost.
// $params: batch (int)
MATCH (op:Operation)
WHERE op.rewrites_memory IS NULL
WITH op
LIMIT $batch
RETURN op.project AS project, collect(op.id) AS ids
