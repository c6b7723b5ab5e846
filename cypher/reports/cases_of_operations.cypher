// The cases whose report row depends on some operations: those whose answer one of them
// produced (their system) and those whose attribution blames one of them. Deleting the
// operations changes or removes those rows, so the deletion counts them again.
// $params: project (string), ids (list of operation ids)
UNWIND $ids AS op_id
MATCH (o:Operation {project: $project, id: op_id})
CALL (o) {
  MATCH (o)-[:PRODUCES]->(:Unit)<-[:ANSWERED_BY]-(c:Case)
  RETURN c
  UNION
  MATCH (o)<-[:BLAMES]-(:Attribution)<-[:ATTRIBUTED]-(c:Case)
  RETURN c
}
RETURN collect(DISTINCT c.id) AS ids
