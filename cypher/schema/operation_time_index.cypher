// Walks a project's operations in time order (audit idle_operations): a seek
// on this index returns them sorted by ts, so a page stops after the operations it needs instead
// of sorting the whole project first. (Operations always have ts: the wire format requires it.)
// $params: none
CREATE INDEX operation_time IF NOT EXISTS FOR (o:Operation) ON (o.project, o.ts)
