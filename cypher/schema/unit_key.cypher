// Uniqueness of (project, id) for units; MERGE on units relies on it.
// $params: none
CREATE CONSTRAINT unit_key IF NOT EXISTS FOR (u:Unit) REQUIRE (u.project, u.id) IS UNIQUE
