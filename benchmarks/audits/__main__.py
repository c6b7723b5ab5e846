"""``python -m benchmarks.audits VARIANT [options]``."""

from benchmarks.runner import run

VARIANTS = {
    "latency": "latency",
    "ancestry": "ancestry",
    "long-entry": "long_entry",
    "long-session": "long_session",
    "case-search": "case_search",
    "report-counts": "report_counts",
}

if __name__ == "__main__":
    run("audits", VARIANTS)
