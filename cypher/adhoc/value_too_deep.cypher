// The estimate adhoc/value_size gives a value nested deeper than it walks: more than a whole
// answer may take, so that the row is treated as too big.
// $params: $_memtrace_max_row_bytes: the answer's byte budget (int).
($_memtrace_max_row_bytes + 1)
