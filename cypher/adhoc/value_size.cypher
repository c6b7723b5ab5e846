// One level of the estimate of a value's size as JSON, for adhoc/bounded_read: never more bytes
// than service/adhoc/service.py counts for the value, so a row the estimate finds too big the
// service would have stopped at anyway. A string is its characters and quotes; a list is its
// brackets, and per item a comma and the item's estimate; a map, node or relationship the same
// over its keys and its values (a node's or path's brackets and names count 29, a
// relationship's 23, labels and type 0); a path over its nodes and relationships; anything
// else 1. Only the last line recurses (once), so the text grows linearly with the depth.
// $params: none of its own; {{deeper}} past the deepest level is adhoc/value_too_deep.
// Filled in by service/adhoc/bound.py: {{level}} and {{next}} number this level's variables
// (_memtrace_v{{level}} holds the value) and the next level's; {{deeper}} is the next level's
// estimate of _memtrace_v{{next}}.
reduce(_memtrace_t{{level}} =
    CASE
      WHEN _memtrace_v{{level}} IS :: STRING NOT NULL THEN size(_memtrace_v{{level}}) + 2
      WHEN _memtrace_v{{level}} IS :: NODE NOT NULL | PATH NOT NULL THEN 29
      WHEN _memtrace_v{{level}} IS :: RELATIONSHIP NOT NULL THEN 23
      ELSE 1
    END,
  _memtrace_v{{next}} IN
    CASE
      WHEN _memtrace_v{{level}} IS :: LIST<ANY> NOT NULL THEN _memtrace_v{{level}}
      WHEN _memtrace_v{{level}} IS :: PATH NOT NULL
        THEN nodes(_memtrace_v{{level}}) + relationships(_memtrace_v{{level}})
      WHEN _memtrace_v{{level}} IS :: MAP NOT NULL | NODE NOT NULL | RELATIONSHIP NOT NULL
        THEN keys(_memtrace_v{{level}})
          + [_memtrace_k{{level}} IN keys(_memtrace_v{{level}}) |
            _memtrace_v{{level}}[_memtrace_k{{level}}]]
      ELSE []
    END |
  _memtrace_t{{level}} + 1 + {{deeper}})
