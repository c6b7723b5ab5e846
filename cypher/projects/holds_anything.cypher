// Whether a project holds anything GET /projects would list it for (projects/list_projects'
// labels: an operation, a defined unit, a case, OTLP warnings, an unfinished deletion), for the
// console's "no such project" page. Each part one seek on the label's (project, ...) index.
// $params: project (string)
RETURN EXISTS { MATCH (:Operation {project: $project}) }
  OR EXISTS { MATCH (u:Unit {project: $project}) WHERE u.defined }
  OR EXISTS { MATCH (:Case {project: $project}) }
  OR EXISTS { MATCH (:OtlpWarnings {project: $project}) }
  OR EXISTS { MATCH (:ProjectDeletion {project: $project}) } AS holds
