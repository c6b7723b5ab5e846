// Walks a session's operations in time order (sessions/session_operations, session_cases): a
// seek on the session's id returns them sorted by ts, so a page stops after its first rows
// instead of sorting every operation of a session stamped on a whole deployment. Operations
// always have ts (the wire format requires it), so every operation naming a session is here.
// operation_session stays for the seeks on several sessions at once (attribution/scope_messages).
// $params: none
CREATE INDEX operation_session_time IF NOT EXISTS FOR (o:Operation) ON (o.project, o.session_id, o.ts)
