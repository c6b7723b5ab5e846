// Walks a project's operations in time order, latest first (attribution/recent_messages: the
// scope of last resort of a case whose lineage links to no message): a seek on this index
// returns them sorted by ts, so the read stops after its window instead of sorting the whole
// project first. (Operations always have ts: the wire format requires it.)
// $params: none
CREATE INDEX operation_time IF NOT EXISTS FOR (o:Operation) ON (o.project, o.ts)
