// Takes the write lock of some cases for the rest of the transaction before their kept report
// counts are read (reports/counted_cases): a concurrent writer of the same case waits here until
// this one commits, so each subtracts exactly what the other added. Setting and removing a
// property leaves each case as it was. Callers pass the ids sorted (one lock order).
// $params: project (string), ids (list of string)
UNWIND $ids AS case_id
MATCH (c:Case {project: $project, id: case_id})
SET c.report_lock = true
REMOVE c.report_lock
RETURN count(c) AS locked
