"""Judges answer one question about units: does this unit carry the information needed to answer
the case's question correctly? Two kinds: ``heuristic`` (lexical, no network) and ``llm``."""
