// The GenAI log events kept for some spans, read to join them to the stored operations of those
// spans, with each node's write lock taken first (the SET writes what is there): two requests
// joining events to one span run one after the other, so the later one reads every event the
// earlier one kept and none is lost to a stale read.
// $params: project (string), ids (list of string: '<trace id>:<span id>', hex)
UNWIND $ids AS id
MATCH (l:OtlpSpanLogs {project: $project, id: id})
SET l.events = l.events
RETURN l.id AS id, l.events AS events
