// Uniqueness of (project, id) for cases; MERGE on cases relies on it.
// $params: none
CREATE CONSTRAINT case_key IF NOT EXISTS FOR (c:Case) REQUIRE (c.project, c.id) IS UNIQUE
