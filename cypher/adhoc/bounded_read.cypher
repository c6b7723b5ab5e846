// A caller's read-only query (POST /cypher) wrapped so that Neo4j sizes each row before sending
// it, and sends none of the values of a row bigger than the answer's whole byte budget.
// $params: $_memtrace_max_row_bytes: the answer's byte budget (int); a row estimated above it
//   comes back with every column null. The caller's own parameters pass through.
// Filled in by service/adhoc/bound.py with names and generated expressions, never with values:
//   {{query}} the caller's query, each returned expression named with AS; {{columns}} its
//   columns, backquoted; {{row}} the row as a map {c0: `first`, ...}, read back through keys()
//   so that Neo4j cannot type its values statically (it refuses nodes() on a known string);
//   {{value_size}} the estimate of _memtrace_v1 (adhoc/value_size, nested); {{nulled}} the
//   columns as adhoc/bounded_column.
// The row's estimate is that of the JSON list of its values plus the comma after it.
CALL () {
{{query}}
}
WITH {{columns}}, {{row}} AS _memtrace_row
WITH {{columns}}, 2 + size(keys(_memtrace_row))
  + reduce(_memtrace_t0 = 0, _memtrace_v1 IN
      [_memtrace_k0 IN keys(_memtrace_row) | _memtrace_row[_memtrace_k0]] |
      _memtrace_t0 + {{value_size}}) AS _memtrace_row_bytes
RETURN {{nulled}}, _memtrace_row_bytes
