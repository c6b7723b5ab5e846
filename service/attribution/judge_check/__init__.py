"""Know your judge: ``memtrace judge check`` and ``/judge/check`` run the configured LLM on the
probe set the code builds (``service.attribution.judge_probes``) and record its accuracy per
project; ``routes`` -> ``service`` (run, record, the start-up self check) -> ``repository``;
``models``.
"""
