"""``python -m benchmarks.client [options]``: one variant, no subcommand."""

from benchmarks.runner import run_only

if __name__ == "__main__":
    run_only("client", "sdk")
