// What a case recorded later by trace id needs of the trace's answering call
// (service/otlp/trace_cases.py): its conversation and the messages it consumed, in the
// order it consumed them (the question is the last user message among them).
// $params: project (string), operation (string: the call's operation id, otel:<trace>:<span>)
MATCH (o:Operation {project: $project, id: $operation})
OPTIONAL MATCH (o)-[c:CONSUMES]->(m:Unit {kind: 'message'})
WITH o, m ORDER BY c.position
RETURN o.session_id AS session_id,
       [x IN collect(m) | {content: x.content, attributes: x.attributes}] AS messages
