// The minimal graph's only unit index (benchmarks/ingest/throughput.py, path `minimal`): the
// uniqueness of (project, id), without which no writer could find a unit it links. Its own
// label, so that none of the service's indexes on :Unit apply to it.
// $params: none
CREATE CONSTRAINT minimal_unit_key IF NOT EXISTS
FOR (u:MinimalUnit) REQUIRE (u.project, u.id) IS UNIQUE
