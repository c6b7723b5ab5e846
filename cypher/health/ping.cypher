// Readiness probe: the database answers a query.
// $params: none
RETURN 1 AS ok
