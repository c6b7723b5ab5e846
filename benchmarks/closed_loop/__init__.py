"""The closed loop, measured (``loop``): the memory system it optimises (``system``) and the
simulated model it runs against by default (``model``). Run ``python -m benchmarks.closed_loop``."""
