// Marks a project as being deleted, in its own transaction before any of its nodes goes: from
// then on reads answer 404 and writes 409 (service/projects/service.py), so a deletion that
// stops half way (a crash, a restart) never leaves a half project served. DELETE /project run
// again finds the marker and finishes. Running it on a marked project keeps the first start.
// $params: project (string)
MERGE (d:ProjectDeletion {project: $project})
ON CREATE SET d.started = datetime()
RETURN d.started AS started
