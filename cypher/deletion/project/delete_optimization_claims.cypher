// Deletes up to $batch prompt optimisation claims of a project being deleted; run until it
// deletes nothing (DELETE /project, one label after another). The seek on the
// optimization_claim_key index ((project, id), hence "id IS NOT NULL") reads only this
// project's nodes.
// $params: project (string), batch (integer)
MATCH (n:OptimizationClaim {project: $project})
WHERE n.id IS NOT NULL
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
