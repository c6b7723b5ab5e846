// Deletes up to $batch units of a project dated before $before that nothing refers to: a
// message or answer sent with no operation, or left alone once retention removed the
// operations and cases that used it. An old unit an operation or case still refers to is kept,
// as retention keeps everything the kept graph needs; a unit without ts has no age and is kept.
// Run until it finds no candidate. Relationship-free units hold no reaches_memory path, so
// deleting them changes no other unit's mark. Each is checked again under its write lock, as in
// delete_operations.cypher: a batch that linked it since the first check keeps it.
// $params: project (string), before (datetime), batch (integer)
// Returns: candidates (units found free at first), deleted (those still free under the lock)
MATCH (u:Unit {project: $project})
WHERE u.id IS NOT NULL AND u.ts < $before AND NOT EXISTS { (u)--() }
WITH u LIMIT $batch
SET u._LOCK_ = true REMOVE u._LOCK_
WITH collect(u) AS candidates
CALL (candidates) {
  UNWIND candidates AS u
  WITH u WHERE NOT EXISTS { (u)--() }
  DELETE u
  RETURN count(u) AS deleted
}
RETURN size(candidates) AS candidates, deleted
