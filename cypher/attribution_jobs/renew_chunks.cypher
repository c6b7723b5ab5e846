// Renews the leases of the chunks a process's takers hold: each by $lease_ms from now, when its
// holder is still the one named (a chunk whose lease expired may have gone to another taker)
// and it is neither done nor stopped (no free_at); each renewed chunk's job gets a heartbeat.
// Returns the chunks renewed; the others are no longer held.
// $params: held (list of map: project (string), job_id (string), seq (int), holder (string)),
//          lease_ms (int)
UNWIND $held AS h
MATCH (k:JobChunk {project: h.project, job_id: h.job_id, seq: h.seq})
WHERE k.holder = h.holder AND k.free_at IS NOT NULL AND k.done IS NULL
SET k.free_at = datetime() + duration({milliseconds: $lease_ms})
WITH k
MATCH (k)-[:CHUNK_OF]->(j:AttributionJob)
SET j.heartbeat_at = datetime()
RETURN k.project AS project, k.job_id AS job_id, k.seq AS seq
