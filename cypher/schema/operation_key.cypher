// Uniqueness of (project, id) for operations; MERGE on operations relies on it.
// $params: none
CREATE CONSTRAINT operation_key IF NOT EXISTS FOR (o:Operation) REQUIRE (o.project, o.id) IS UNIQUE
