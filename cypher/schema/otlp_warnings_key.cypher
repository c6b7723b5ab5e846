// One warnings log per project (GET /otlp/warnings): found by a seek, and concurrent exports
// warning at once end with one node.
// $params: none
CREATE CONSTRAINT otlp_warnings_key IF NOT EXISTS
FOR (w:OtlpWarnings) REQUIRE w.project IS UNIQUE
