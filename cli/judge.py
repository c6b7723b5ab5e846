"""``memtrace judge check``: how well the service's configured LLM judges (registered by
``register``). The service runs the check (``POST /judge/check``) with its own LLM settings."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console

from cli.http import checked, failures_end_in_one_line, service_client

console = Console()
err = Console(stderr=True)

CHECK_TIMEOUT_S = 3600
"""Some 15-30 judge calls: minutes on a small local model, one request."""


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def check_lines(result: dict[str, Any], project: str) -> list[str]:
    """The outcome as a person reads it: one figure per line."""
    accuracy = result["accuracy"]
    scored = (
        f"{accuracy:.2f} ({result['correct']} of {result['answered']} answered units right)"
        if accuracy is not None
        else "- (the model answered no unit)"
    )
    lines = [
        f"model      {result['model']} on {result['probe_set']} "
        f"({result['units']} units, {result['questions']} questions)",
        f"accuracy   {scored}",
        f"answered   {_share(result['answered_share'])} of the units",
        f"malformed  {_share(result['malformed_share'])} of {result['calls']} calls "
        f"(failed for any reason: {_share(result['failed_share'])})",
        f"latency    median {_seconds(result['latency_median_s'])}, "
        f"p90 {_seconds(result['latency_p90_s'])} per call",
        f"tokens     {result['input_tokens']} in, {result['output_tokens']} out "
        f"({result['seconds']:.1f} s in all)",
    ]
    if result["below_threshold"]:
        lines.append(
            f"below the threshold {result['min_accuracy']:.2f} (MEMTRACE_LLM_MIN_ACCURACY)"
        )
    if result["recorded"]:
        lines.append(f"recorded for project {project!r}: its llm results use these figures")
    return lines


def register(app: typer.Typer) -> None:
    """Add ``judge check`` to the ``memtrace`` command."""
    judge_app = typer.Typer(help="The LLM judge the service is configured with.")
    app.add_typer(judge_app, name="judge")

    @judge_app.command("check")
    def check(
        project: Annotated[str, typer.Option(help="Project to record the outcome for.")] = (
            "default"
        ),
        record: Annotated[
            bool,
            typer.Option(
                "--record",
                help="Store the outcome for the project: its llm results then take the "
                "measured accuracy as confidence, and warn below MEMTRACE_LLM_MIN_ACCURACY.",
            ),
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
        url: Annotated[str | None, typer.Option(help="Service URL.")] = None,
    ) -> None:
        """Run the service's LLM judge on a built-in probe set (units that do and do not carry
        a fact, paraphrases, dates, long units) and print its accuracy, the share of units it
        answered, the share of malformed answers, latency per call and tokens."""
        with (
            failures_end_in_one_line(err, url),
            service_client(url, timeout_s=CHECK_TIMEOUT_S) as client,
        ):
            result = checked(
                client.post("/judge/check", params={"project": project}, json={"record": record})
            )
        if as_json:
            console.print_json(json.dumps(result))
        else:
            for line in check_lines(result, project):
                console.print(line, highlight=False, markup=False)
