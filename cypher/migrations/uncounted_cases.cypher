// Up to $batch cases stored before the kept report counts (report_key is null), in any project
// of the store, grouped by project: the start-up migration counts them (service/reports/counts/repository.py),
// a project and batch per transaction, until none is left. On a store written by this version
// it finds none, and the label scan is the whole cost.
// $params: batch (int)
MATCH (c:Case)
WHERE c.report_key IS NULL AND c.project IS NOT NULL
WITH c
LIMIT $batch
RETURN c.project AS project, collect(c.id) AS ids
