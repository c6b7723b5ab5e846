// Units and operations named by id, in the projection of attribution/ancestors (edges of an
// operation as [type, unit id, position], `ts` as [epoch seconds, nanosecond, offset seconds]):
// the rows an attribution job has not read before (attribution/ancestor_ids says why).
// $params: project (string), unit_ids (list of string), operation_ids (list of string)
CALL () {
  UNWIND $unit_ids AS id
  MATCH (x:Unit {project: $project, id: id})
  RETURN x
  UNION
  UNWIND $operation_ids AS id
  MATCH (x:Operation {project: $project, id: id})
  RETURN x
}
RETURN collect(x {
  .id, .kind, .name, .content, .system, .session_id, .attributes, .defined,
  ts: CASE WHEN x.ts IS NULL THEN null
      ELSE [x.ts.epochSeconds, x.ts.nanosecond, x.ts.offsetSeconds] END,
  is_operation: x:Operation,
  edges: CASE WHEN x:Operation THEN COLLECT {
    MATCH (x)-[r:CONSUMES|PRODUCES]->(u:Unit)
    RETURN [type(r), u.id, r.position]
  } ELSE [] END
}) AS nodes
