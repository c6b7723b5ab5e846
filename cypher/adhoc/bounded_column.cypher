// One column of adhoc/bounded_read: its value, or null when the row is estimated above the
// answer's byte budget (the value then never leaves Neo4j).
// $params: $_memtrace_max_row_bytes: the answer's byte budget (int).
// Filled in by service/adhoc/bound.py: {{column}} the column's name, backquoted.
CASE WHEN _memtrace_row_bytes <= $_memtrace_max_row_bytes THEN {{column}} END AS {{column}}
