"""Moved to ``tests.support.llm_server``; this name stays only for benchmarks/attribution.py
(another engineer's file at the time of the move). Remove it once it imports
``tests.support.llm_server``."""

from tests.support.llm_server import ScriptedLLM, scripted_llm

__all__ = ["ScriptedLLM", "scripted_llm"]
