// A project's kept report counts within a report's filters: one row per count node that
// counts a case (nodes back at zero are skipped). The key index is sought on its project prefix
// (`n.key IS NOT NULL` lets the planner use it). Days are 'YYYY-MM-DD' strings, so they compare
// as dates.
// $params: project (string), system (string or null), since_day (string 'YYYY-MM-DD' or null:
//          only counts of that day or later), until_day (string or null: only days before it)
MATCH (n:ReportCount {project: $project})
WHERE n.key IS NOT NULL AND n.cases > 0
  AND ($system IS NULL OR n.system = $system)
  AND ($since_day IS NULL OR n.day >= $since_day)
  AND ($until_day IS NULL OR n.day < $until_day)
RETURN n.day AS day, n.system AS system, n.verdict AS verdict, n.status AS status,
       n.error_type AS error_type, n.operation_id AS operation_id,
       n.operation_name AS operation_name, n.operation_system AS operation_system,
       n.prompt AS prompt, n.cases AS cases, n.llm_calls AS llm_calls,
       n.input_tokens AS input_tokens, n.output_tokens AS output_tokens, n.seconds AS seconds,
       n.llm_judged AS llm_judged, n.on_llm AS on_llm
