// Sets the scope names migrations/scope_names_missing found missing, as the writer would have
// (graph_schema/scope_names.py); a node deleted since is skipped.
// $params: rows (list of {node (element id), conversation_id (string or null),
//                         user_id (string or null), store_id (string or null)})
UNWIND $rows AS row
MATCH (n)
WHERE elementId(n) = row.node
SET n.conversation_id = row.conversation_id, n.user_id = row.user_id, n.store_id = row.store_id
RETURN count(n) AS changed
