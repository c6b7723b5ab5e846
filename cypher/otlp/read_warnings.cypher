// A project's OTLP warnings log: the count of every warning and the newest entries (JSON
// strings, oldest first); no row when the project was never warned.
// $params: project (string)
MATCH (w:OtlpWarnings {project: $project})
RETURN w.total AS total, w.entries AS entries
