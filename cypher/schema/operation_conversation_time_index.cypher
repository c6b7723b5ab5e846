// Walks a conversation's operations (those whose conversation_id attribute names it) in time
// order, as operation_session_time does a session's (sessions/session_operations, session_cases).
// $params: none
CREATE INDEX operation_conversation_time IF NOT EXISTS FOR (o:Operation) ON (o.project, o.conversation_id, o.ts)
