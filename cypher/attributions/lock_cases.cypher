// Takes the write lock of some cases for the rest of the transaction, so that reading and
// replacing their attributions (attributions/replace_attributions, run next in the same
// transaction) is one step under any concurrency: a second writer of a case waits here until
// the first commits, then sees and replaces what the first stored. Setting and removing a
// property leaves each case as it was. Callers pass the ids sorted, so two writers of
// overlapping batches lock in the same order.
// $params: project (string), case_ids (list of string)
UNWIND $case_ids AS case_id
MATCH (c:Case {project: $project, id: case_id})
SET c.attribution_lock = true
REMOVE c.attribution_lock
RETURN count(c) AS locked
