// The GenAI log events kept for some spans, for a trace export converted with them
// (service/otlp/span_logs_repository.py). One seek per span on the (project, id) key.
// $params: project (string), ids (list of string: '<trace id>:<span id>', hex)
UNWIND $ids AS id
MATCH (l:OtlpSpanLogs {project: $project, id: id})
RETURN l.id AS id, l.events AS events
