"""Moved to ``tests.support.servers``; this name stays only for benchmarks/attribution.py and
benchmarks/attribution_job.py (another engineer's files at the time of the move). Remove it once
they import ``tests.support.servers``."""

from tests.support.servers import REPO, run_service

__all__ = ["REPO", "run_service"]
