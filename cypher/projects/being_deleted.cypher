// Whether a project is being deleted (DELETE /project marked it and has not finished): asked
// when a request opens a session on the project, so reads answer 404 and writes 409 until the
// deletion is run to its end. A seek on the project_deletion_key constraint.
// $params: project (string)
RETURN EXISTS { MATCH (:ProjectDeletion {project: $project}) } AS deleting
