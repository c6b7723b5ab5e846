"""Read benchmarks on big projects: audits, reports, ancestry and ad-hoc Cypher latency, and the
before/after comparisons of the ancestry read and of one long memory entry's audits. Run
``python -m benchmarks.audits`` for the list of variants."""
