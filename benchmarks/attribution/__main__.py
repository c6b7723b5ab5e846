"""``python -m benchmarks.attribution VARIANT [options]``."""

from benchmarks.runner import run

VARIANTS = {
    "accuracy": "accuracy",
    "job": "job",
    "big-project": "big_project",
    "million": "million",
    "before-after": "before_after",
    "profile": "job_profile",
    "tune": "tune",
    "calibrate": "calibrate",
    "reread": "reread",
    "fulltext": "fulltext",
    "memtracebench": "memtracebench",
}

if __name__ == "__main__":
    run("attribution", VARIANTS)
