// The ids of a project's operations recorded before a time, which DELETE /data?before=
// removes (retention). Seeks the (project, ts) index: the cost is the old operations, not the
// project's. An operation with no ts is never selected.
// $params: project (string), before (datetime)
MATCH (o:Operation {project: $project})
USING INDEX o:Operation(project, ts)
WHERE o.ts < $before
RETURN o.id AS id
