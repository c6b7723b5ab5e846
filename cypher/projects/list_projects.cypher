// What each project holds: one row per (project, what) with a count and the newest time, for
// GET /projects. "what" is operations, units (defined ones, not bare references), cases,
// failed_cases, otlp_warnings (how many the project's OTLP exports were given), or deleting (1
// for a project DELETE /project marked and has not finished). Each part reads the
// (project, ...) indexes of its label; no row for a project that holds none of that label.
// Cases and failed cases are the sums of the project's kept report counts
// (service/reports/counts/repository.py), not a count of its cases: they cost the same at any
// size.
// $params: projects (list of string or null: only these projects; null: every project)
MATCH (o:Operation)
WHERE o.project IS NOT NULL AND ($projects IS NULL OR o.project IN $projects)
RETURN o.project AS project, 'operations' AS what, count(o) AS n, max(o.ts) AS newest
UNION ALL
MATCH (u:Unit)
WHERE u.project IS NOT NULL AND ($projects IS NULL OR u.project IN $projects) AND u.defined
RETURN u.project AS project, 'units' AS what, count(u) AS n, max(u.ts) AS newest
UNION ALL
MATCH (k:ReportCount)
WHERE k.project IS NOT NULL AND ($projects IS NULL OR k.project IN $projects) AND k.cases > 0
WITH k.project AS project, sum(k.cases) AS n
RETURN project, 'cases' AS what, n, null AS newest
UNION ALL
MATCH (k:ReportCount)
WHERE k.project IS NOT NULL AND ($projects IS NULL OR k.project IN $projects) AND k.cases > 0
  AND k.verdict = 'failed'
WITH k.project AS project, sum(k.cases) AS n
RETURN project, 'failed_cases' AS what, n, null AS newest
UNION ALL
MATCH (d:ProjectDeletion)
WHERE d.project IS NOT NULL AND ($projects IS NULL OR d.project IN $projects)
RETURN d.project AS project, 'deleting' AS what, count(d) AS n, null AS newest
UNION ALL
MATCH (w:OtlpWarnings)
WHERE w.project IS NOT NULL AND ($projects IS NULL OR w.project IN $projects)
RETURN w.project AS project, 'otlp_warnings' AS what, sum(w.total) AS n, null AS newest
