// Links an optimization operation to the stored attributions of the cases it used, so the graph
// says which failures motivated a prompt version. Run in the transaction that wrote the
// operation. An attribution replaced later loses the link; the case ids stay in the
// operation's attributes (cases).
// $params: project (string), operation_id (string), case_ids (list of string)
MATCH (o:Operation {project: $project, id: $operation_id})
UNWIND $case_ids AS case_id
MATCH (:Case {project: $project, id: case_id})-[:ATTRIBUTED]->(a:Attribution)
MERGE (o)-[:USED]->(a)
