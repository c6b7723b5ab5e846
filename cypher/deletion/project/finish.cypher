// Ends a project's deletion: removes its marker when none of its nodes is left, in one
// transaction, and says whether some are (a write that passed the marker check just before
// the marker was set may land during the deletion: the caller then runs the steps again).
// Each EXISTS seeks the project's (project, key) index of one label.
// $params: project (string)
WITH EXISTS { MATCH (n:Attribution {project: $project}) WHERE n.case_id IS NOT NULL }
  OR EXISTS { MATCH (n:AttributionJob {project: $project}) WHERE n.id IS NOT NULL }
  OR EXISTS { MATCH (n:JobChunk {project: $project}) WHERE n.job_id IS NOT NULL AND n.seq IS NOT NULL }
  OR EXISTS { MATCH (n:Case {project: $project}) WHERE n.id IS NOT NULL }
  OR EXISTS { MATCH (n:Operation {project: $project}) WHERE n.id IS NOT NULL }
  OR EXISTS { MATCH (n:Unit {project: $project}) WHERE n.id IS NOT NULL }
  OR EXISTS { MATCH (n:JudgeCheck {project: $project}) WHERE n.id IS NOT NULL }
  OR EXISTS { MATCH (n:OptimizationClaim {project: $project}) WHERE n.id IS NOT NULL }
  OR EXISTS { MATCH (n:OtlpWarnings {project: $project}) }
  OR EXISTS { MATCH (n:OtlpSpanLogs {project: $project}) WHERE n.id IS NOT NULL }
  OR EXISTS { MATCH (n:ReportCount {project: $project}) WHERE n.key IS NOT NULL } AS remaining
OPTIONAL MATCH (d:ProjectDeletion {project: $project})
WHERE NOT remaining
DELETE d
RETURN remaining
