// The full-text (Lucene) index benchmarks/attribution/fulltext.py measures: every unit's content,
// its project and its id, analysed by Lucene's English analyzer (stop words out, Porter stems),
// the closest to the service's BM25 words (stop words out, Snowball stems). The project and the
// id fields let a query scope itself inside Lucene ("content:(...) AND project:\"p\"").
// $params: none (an index name cannot be a parameter in Neo4j 5)
CREATE FULLTEXT INDEX bench_unit_text IF NOT EXISTS
FOR (u:Unit) ON EACH [u.content, u.project, u.id]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
