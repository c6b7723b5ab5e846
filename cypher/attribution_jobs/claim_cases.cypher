// Marks cases of a job as finished (state: the status of its result, attributed, inconclusive,
// unanswerable or not_failed; or skipped; or failed, with a message) unless they already are,
// and returns those it marked: the caller then stores the
// attributions of exactly those. Each case's COVERS relationship is write-locked (the first
// SET) before its state is read, so two takers of one chunk (the first one's lease expired)
// never both count a case; the job node itself is not locked here, so a renewal or a resume does
// not wait for a chunk's write (attribution_jobs/finish_chunk comes last, briefly).
// Each case keeps the taker that finished it (r.runner), which says which processes worked, and
// whether its result took a verdict from the LLM (r.on_llm), which the job's progress counts.
// $params: project (string), job_id (string), runner (string: the taker's holder id),
//          rows (list of map: case_id (string), state (string), message (string or null),
//                on_llm (boolean))
MATCH (j:AttributionJob {project: $project, id: $job_id})
UNWIND $rows AS row
MATCH (j)-[r:COVERS]->(c:Case {project: $project, id: row.case_id})
SET r.claim_lock = true
REMOVE r.claim_lock
WITH r, c, row
WHERE r.state IS NULL
SET r.state = row.state, r.message = row.message, r.runner = $runner, r.on_llm = row.on_llm
RETURN c.id AS case_id
