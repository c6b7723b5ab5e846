// The best `limit` hits of a full-text query (cypher/benchmarks/fulltext_index), best first, kept
// when they are in a case's scope: the first `k` kept ids, how many hits were read, and how many
// had to be read to keep `k` (null when fewer than `k` of the hits are in scope).
// $params: index (string: full-text index name), lucene (string: a query in Lucene syntax),
//          limit (int: hits read), scope (list of string: the scope's unit ids), k (int)
CALL db.index.fulltext.queryNodes($index, $lucene, {limit: $limit}) YIELD node
WITH collect(node.id) AS hits
WITH hits, [i IN range(0, size(hits) - 1) WHERE hits[i] IN $scope] AS kept
RETURN size(hits) AS read,
       [i IN kept[..$k] | hits[i]] AS ids,
       CASE WHEN size(kept) >= $k THEN kept[$k - 1] + 1 END AS needed
