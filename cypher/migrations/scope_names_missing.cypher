// Operations and units stored before the writer kept the scope names as properties
// (graph_schema/scope_names.py): those whose attributes mention `conversation_id`, `user_id` or
// `store_id` and that have none of those properties. Read once at start-up; the service computes the values from
// the attributes (Cypher reads no JSON) and sets them with migrations/set_scope_names. On a
// store written by this version the whole cost is one scan of both labels (a node whose
// attribute is empty names no scope and is read again, and changed by nothing, each start-up).
// $params: none
MATCH (n:Operation)
WHERE n.conversation_id IS NULL AND n.user_id IS NULL AND n.store_id IS NULL
  AND (n.attributes CONTAINS '"conversation_id"' OR n.attributes CONTAINS '"user_id"'
       OR n.attributes CONTAINS '"store_id"')
RETURN elementId(n) AS node, n.attributes AS attributes
UNION ALL
MATCH (n:Unit)
WHERE n.conversation_id IS NULL AND n.user_id IS NULL AND n.store_id IS NULL
  AND (n.attributes CONTAINS '"conversation_id"' OR n.attributes CONTAINS '"user_id"'
       OR n.attributes CONTAINS '"store_id"')
RETURN elementId(n) AS node, n.attributes AS attributes
