// Stores on each case what it now adds to the kept report counts (the key of its count node and
// its sums), so the next writer of the case subtracts exactly that.
// $params: project (string), cases (list of {id (string), key (string),
//          sums (list of float: cases, llm_calls, input_tokens, output_tokens, seconds,
//          llm_judged, on_llm)})
UNWIND $cases AS row
MATCH (c:Case {project: $project, id: row.id})
SET c.report_key = row.key, c.report_sums = row.sums
RETURN count(c) AS marked
