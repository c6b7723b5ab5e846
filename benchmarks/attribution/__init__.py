"""Attribution benchmarks: accuracy and cost on labelled traces, jobs' speed, big projects,
before/after comparisons, and the in-process tools for tuning the walk and the judge.

Run ``python -m benchmarks.attribution`` for the list of variants. The library beside them:
``run`` (datasets into projects, ``/attribute`` requests), ``inprocess`` (the engine without
Neo4j), ``oracle`` (the ground-truth LLM), ``flatlog`` (the no-graph baseline), ``endpoint`` (a
real LLM in the oracle's place), ``metrics`` and ``report`` (figures and tables), ``invariance``
(results compared field by field).
"""
