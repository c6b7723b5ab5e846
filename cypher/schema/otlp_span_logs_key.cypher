// One node of kept GenAI log events per project and span (POST /otlp/v1/logs): found by a seek,
// and concurrent log exports naming the same span end with one node.
// $params: none
CREATE CONSTRAINT otlp_span_logs_key IF NOT EXISTS
FOR (l:OtlpSpanLogs) REQUIRE (l.project, l.id) IS UNIQUE
