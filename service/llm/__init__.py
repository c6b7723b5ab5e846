"""The one chat client every part of MemTrace talks to a model through: the llm judge, the prompt
optimiser, ``memtrace judge check`` and the closed-loop benchmark's memory system
(:mod:`service.llm.client`), and what they read and estimate of its text
(:mod:`service.llm.text`). Each caller keeps its own policy on top (the judge's batches and
retries in halves, the optimiser's hard budget); the client owns what talking to an
OpenAI-compatible endpoint takes."""
