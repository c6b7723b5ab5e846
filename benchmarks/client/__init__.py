"""The Python SDK's benchmark (``sdk``): its cost in the caller, delivery, spool replay. Run
``python -m benchmarks.client [--quick]``."""
