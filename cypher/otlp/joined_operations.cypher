// The stored operations of some spans, as ingest/otlp_joined.py rebuilds them: kind, fingerprint,
// attributes (the span's, with `otel`), and their inputs and outputs in position order.
// $params: project (string), ids (list of string: operation ids, 'otel:<trace id>:<span id>')
UNWIND $ids AS id
MATCH (o:Operation {project: $project, id: id})
CALL (o) {
  OPTIONAL MATCH (o)-[c:CONSUMES]->(u:Unit)
  WITH c, u ORDER BY c.position
  RETURN collect(u.id) AS inputs
}
CALL (o) {
  OPTIONAL MATCH (o)-[p:PRODUCES]->(u:Unit)
  WITH p, u ORDER BY p.position
  RETURN collect(u.id) AS outputs
}
RETURN o.id AS id, o.kind AS kind, o.fp AS fp, o.attributes AS attributes, inputs, outputs
