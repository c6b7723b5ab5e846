"""``python -m benchmarks.ingest VARIANT [options]``."""

from benchmarks.runner import run

VARIANTS = {
    "throughput": "throughput",
    "workers": "workers",
    "big-file": "big_file",
    "marks": "marks",
    "ablation": "ablation",
}

if __name__ == "__main__":
    run("ingest", VARIANTS)
