// The stored spans of some traces, for the cases of an OTLP export marked on a span whose
// answering descendant an earlier export carried (ingest/otlp_cases.py). Operation ids of OTLP
// spans are `otel:<trace id>:<span id>`: a prefix seek on the (project, id) key. Each span
// comes with its parent and start (from the stored `otel` attributes) and its answers: units of
// kind answer, or, not yet defined, the answers an LLM call names before the log records with
// their text arrive (ingest/otlp.py, ingest/otlp_joined.py).
// $params: project (string), traces (list of string: trace ids, 32 hex digits)
UNWIND $traces AS trace
MATCH (o:Operation {project: $project})
WHERE o.id STARTS WITH 'otel:' + trace + ':'
OPTIONAL MATCH (o)-[p:PRODUCES]->(a:Unit)
WHERE a.kind = 'answer' OR (a.defined = false AND a.id STARTS WITH o.id + '/answer/')
WITH trace, o, a ORDER BY p.position
RETURN trace, o.id AS id, o.kind AS kind, o.attributes AS attributes, collect(a.id) AS answers
