// Keeps the GenAI log events of spans (POST /otlp/v1/logs, ingest/otlp_logs.py): one node per
// project and span, kept after its span arrives too, since a re-sent trace export is converted
// with them again (ingest/otlp_joined.py). An event already kept (the same canonical JSON) is not
// added again, so a retried export changes nothing.
// $params: project (string),
//          rows (list of {id (string: '<trace id>:<span id>', hex), trace_id (string),
//                span_id (string), events (list of string: canonical JSON, no duplicates)})
UNWIND $rows AS row
MERGE (l:OtlpSpanLogs {project: $project, id: row.id})
ON CREATE SET l.trace_id = row.trace_id, l.span_id = row.span_id, l.events = [],
              l.created = datetime()
WITH l, [e IN row.events WHERE NOT e IN l.events] AS new
SET l.events = l.events + new
RETURN sum(size(new)) AS added
