// Uniqueness of (project, key) for a project's kept report counts: concurrent writers MERGE
// the same count node and add to it under its write lock, and the index serves GET /report.
// $params: none
CREATE CONSTRAINT report_count_key IF NOT EXISTS
FOR (n:ReportCount) REQUIRE (n.project, n.key) IS UNIQUE
