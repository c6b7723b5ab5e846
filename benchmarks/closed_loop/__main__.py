"""``python -m benchmarks.closed_loop [options]``: one variant, no subcommand."""

from benchmarks.runner import run_only

if __name__ == "__main__":
    run_only("closed_loop", "loop")
