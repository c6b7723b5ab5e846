// The cases whose answer is one of some units: a writer that gives such a unit a producer or a
// time changes those cases' system or time (service/reports/models.py), so it counts them again.
// $params: project (string), ids (list of unit ids)
UNWIND $ids AS unit_id
MATCH (:Unit {project: $project, id: unit_id})<-[:ANSWERED_BY]-(c:Case)
RETURN collect(DISTINCT c.id) AS ids
