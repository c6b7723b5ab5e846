"""Attribution: from a failed case to the earliest decisive faulty operation and its error type.

- ``engine``: the staged walk (evidence -> response -> construction -> retrieval), see its
  docstring for what each stage blames;
- ``walk``: the state one attribution carries through the stages; ``construction``: following
  the information forward through the operations that build the memory;
- ``graph``: the in-memory view of a case's graph the walk runs on; ``scope``: which source
  units may be a case's evidence, and until when; ``search``: finding evidence when a case names
  none;
- ``judges``: "does this unit carry the information the question needs?" (heuristic, LLM);
  ``structured``: structured unit content as text for them; ``confidence``: how often results
  like one name the right operation.

What an attribution returns and stores is ``service.attribution.models``.
"""
