// The minimal graph's only operation index (benchmarks/ingest/throughput.py, path `minimal`):
// the uniqueness of (project, id). Its own label, so that none of the service's indexes on
// :Operation apply to it.
// $params: none
CREATE CONSTRAINT minimal_operation_key IF NOT EXISTS
FOR (o:MinimalOperation) REQUIRE (o.project, o.id) IS UNIQUE
