// Appends what an OTLP export was warned or refused about to its project's log, keeping the
// newest $keep entries and the count of all of them (service/otlp/warnings_repository.py).
// $params: project (string), entries (list of string: JSON {at, status, message}, oldest
//          first), keep (int > 0)
MERGE (w:OtlpWarnings {project: $project})
ON CREATE SET w.total = 0, w.entries = []
WITH w, w.entries + $entries AS entries
SET w.total = w.total + size($entries),
    w.entries = CASE WHEN size(entries) > $keep THEN entries[size(entries) - $keep..]
                     ELSE entries END,
    w.last = datetime()
