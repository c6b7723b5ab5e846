// Deletes up to $batch units of a project dated before $before that nothing refers to: a
// message or answer sent with no operation, or left alone once retention removed the
// operations and cases that used it. An old unit an operation or case still refers to is kept,
// as retention keeps everything the kept graph needs; a unit without ts has no age and is kept.
// Run until it deletes nothing. Relationship-free units hold no reaches_memory path, so
// deleting them changes no other unit's mark.
// $params: project (string), before (datetime), batch (integer)
MATCH (u:Unit {project: $project})
WHERE u.id IS NOT NULL AND u.ts < $before AND NOT EXISTS { (u)--() }
WITH u LIMIT $batch
DELETE u
RETURN count(u) AS deleted
