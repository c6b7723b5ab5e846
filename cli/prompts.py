"""``memtrace prompts`` and ``memtrace optimize NAME``: prompt versions, how each fared, and the
next version proposed from the failures blamed on the newest (registered by ``register``)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import httpx
import typer
from rich.console import Console
from rich.table import Table

from cli.http import ServiceRequestError, checked, failures_end_in_one_line, service_client
from cli.projects import require_project

console = Console()
err = Console(stderr=True)


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def prompts_table(prompts: list[dict[str, Any]], project: str) -> Table:
    """One row per version: uses, blamed failures by error type, failure rate."""
    table = Table(
        "version",
        "first used",
        "operations",
        "failures",
        "rate",
        "by error type",
        title=f"prompt versions of {project!r}",
    )
    for prompt in prompts:
        for v in prompt["versions"]:
            by_type = ", ".join(f"{k} {n}" for k, n in v["failures_by_error_type"].items())
            table.add_row(
                v["label"],
                str(v["first_used"] or "-")[:19],
                str(v["operations"]),
                str(v["failures"]),
                _rate(v["failure_rate"]),
                by_type or "-",
            )
    return table


def _optimize_body(
    error_type: list[str] | None,
    system: str | None,
    since: str | None,
    until: str | None,
    max_cases: int,
    max_llm_calls: int,
    max_tokens: int,
    force: bool = False,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "force": force or None,
        "error_types": error_type or None,
        "system": system,
        "since": since,
        "until": until,
        "max_cases": max_cases,
        "max_llm_calls": max_llm_calls,
        "max_tokens": max_tokens,
    }
    return {k: v for k, v in body.items() if v is not None}


def stream_optimization(
    client: httpx.Client, name: str, project: str, body: dict[str, Any]
) -> dict[str, Any]:
    """``POST /prompts/{name}/optimize?stream=true``: progress lines on stderr, the result."""
    params = {"project": project, "stream": "true"}
    with client.stream("POST", f"/prompts/{name}/optimize", params=params, json=body) as r:
        if not r.is_success:
            r.read()
            checked(r)
        for line in r.iter_lines():
            if not line.strip():
                continue
            event = json.loads(line)
            if event["event"] == "progress":
                err.print(f"{event['stage']}: {event['done']}/{event['total']}", highlight=False)
            elif event["event"] == "result":
                result: dict[str, Any] = event["result"]
                return result
            else:
                raise ServiceRequestError(f"{event['error']}: {event['message']}", usage=True)
    raise ServiceRequestError("the service ended the stream without a result", usage=False)


def register(app: typer.Typer) -> None:
    """Add ``prompts`` and ``optimize`` to the ``memtrace`` command."""

    @app.command()
    def prompts(
        project: Annotated[str, typer.Option(help="Project.")] = "default",
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
        url: Annotated[str | None, typer.Option(help="Service URL.")] = None,
    ) -> None:
        """Prompt versions: how many operations ran with each, and the failures blamed on them."""
        with failures_end_in_one_line(err, url), service_client(url) as client:
            found = checked(client.get("/prompts", params={"project": project}))
            if not found:  # a project that does not exist reads as empty
                require_project(client, project)
        if as_json:
            console.print_json(json.dumps(found))
        else:
            console.print(prompts_table(found, project))

    @app.command()
    def optimize(
        name: Annotated[str, typer.Argument(help="The prompt to optimise (its newest version).")],
        project: Annotated[str, typer.Option(help="Project.")] = "default",
        error_type: Annotated[
            list[str] | None, typer.Option(help="Only failures of this error type (repeatable).")
        ] = None,
        system: Annotated[str | None, typer.Option(help="Only operations of this system.")] = None,
        since: Annotated[str | None, typer.Option(help="Operations at/after (ISO).")] = None,
        until: Annotated[str | None, typer.Option(help="Operations before (ISO).")] = None,
        max_cases: Annotated[int, typer.Option(min=1, help="At most this many cases.")] = 16,
        max_llm_calls: Annotated[int, typer.Option(min=3, help="LLM call budget.")] = 30,
        max_tokens: Annotated[int, typer.Option(min=1000, help="LLM token budget.")] = 200_000,
        force: Annotated[
            bool,
            typer.Option(help="Optimise with a model its judge check stood down (recorded)."),
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
        url: Annotated[str | None, typer.Option(help="Service URL.")] = None,
    ) -> None:
        """Propose and store the next version of prompt NAME from the failures blamed on it."""
        body = _optimize_body(
            error_type, system, since, until, max_cases, max_llm_calls, max_tokens, force
        )
        with failures_end_in_one_line(err, url), service_client(url) as client:
            result = stream_optimization(client, name, project, body)
        if as_json:
            console.print_json(json.dumps(result))
            return
        cost = result["cost"]
        console.print(f"{result['new_label']} ({result['new_version']})", highlight=False)
        if result.get("forced"):
            err.print(f"forced: {result['forced']}", highlight=False, markup=False)
        console.print(result["diff"], highlight=False, markup=False)
        console.print("feedback summary:", highlight=False)
        console.print(result["feedback_summary"], highlight=False, markup=False)
        console.print(
            f"{len(result['cases'])} cases, {cost['llm_calls']} LLM calls, "
            f"{cost['input_tokens']} + {cost['output_tokens']} tokens",
            highlight=False,
        )
