// Adds deltas to a project's kept report counts, one node per combination the report groups by
// (its key; its dimensions are stored beside it for reading). MERGE relies on the
// report_count_key constraint and SET n.x = n.x + d takes the node's write lock, so concurrent
// writers lose no increment. A node whose counts return to zero is kept (GET /report skips it):
// deleting it could race a writer about to add to it.
// $params: project (string),
//          deltas (list of {key (string), dims ({day (string 'YYYY-MM-DD' or null), system,
//                   verdict, status, error_type, operation_id, operation_name,
//                   operation_system, prompt}: strings or null),
//                   cases, llm_calls, input_tokens, output_tokens, llm_judged, on_llm (int),
//                   seconds (float)}), sorted by key so writers lock in one order
UNWIND $deltas AS d
MERGE (n:ReportCount {project: $project, key: d.key})
ON CREATE SET n += d.dims, n.cases = 0, n.llm_calls = 0, n.input_tokens = 0,
              n.output_tokens = 0, n.seconds = 0.0, n.llm_judged = 0, n.on_llm = 0
SET n.cases = n.cases + d.cases,
    n.llm_calls = n.llm_calls + d.llm_calls,
    n.input_tokens = n.input_tokens + d.input_tokens,
    n.output_tokens = n.output_tokens + d.output_tokens,
    n.seconds = n.seconds + d.seconds,
    n.llm_judged = n.llm_judged + d.llm_judged,
    n.on_llm = n.on_llm + d.on_llm
RETURN count(n) AS changed
