"""The ``memtrace`` command line: serve, neo4j start|stop|status, ingest, import-graph, projects,
cases, show, case-from-trace, attribute, report, audit, jobs, demo, stop (and prompts, optimize,
judge check, embeddings serve, mcp).

Commands talk to the service over HTTP through ``cli.http``; every failure ends there too (one
line on stderr, a non-zero exit code)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version as installed_version
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from memtrace_client import RejectedBatch, ServiceUnavailable
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    track,
)

from cli import embeddings as embedding_commands
from cli import ingest_state, mcp_command
from cli import judge as judge_commands
from cli import prompts as prompt_commands
from cli.attribution import JudgeChoice, attribute_cases, attribution_table, llm_summary
from cli.audits import audits_table, list_audits, parse_params, rows_table, run_audit
from cli.batch_files import BatchFileError, count_operations, is_jsonl, read_batches
from cli.cases import cases_table, fetch_case, list_cases, print_case
from cli.http import (
    CommandError,
    ServiceRequestError,
    batch_client,
    checked,
    failures_end_in_one_line,
    service_client,
    service_url,
    use_api_key,
)
from cli.ingest_file import send_jsonl
from cli.jobs import (
    follow_job,
    job_results,
    jobs_table,
    list_jobs,
    progress_line,
    resume_job,
    start_job,
)
from cli.projects import list_projects, projects_table, require_project
from cli.reports import fetch_report, report_json, report_tables
from cli.tables import show
from ingest.execution_graph import iter_graph_files, load_execution_graph
from service.neo4j_local import LocalNeo4j, Neo4jLaunchError
from service.settings import get_settings

app = typer.Typer(
    help="MemTrace: trace and attribute errors in LLM memory systems.",
    no_args_is_help=True,
    add_completion=False,
)
neo4j_app = typer.Typer(
    help="A local Neo4j from Maven Central jars (no Docker needed).", no_args_is_help=True
)
app.add_typer(neo4j_app, name="neo4j")
console = Console()
err = Console(stderr=True)


def _print_version(asked: bool) -> None:
    if asked:
        console.print(f"memtrace {installed_version('memtrace-server')}", highlight=False)
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            help="The API key to send (default: MEMTRACE_API_KEY, which other users of the "
            "machine cannot read in the process list).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """MemTrace: trace and attribute errors in LLM memory systems."""
    use_api_key(api_key)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address.")] = None,
    port: Annotated[int | None, typer.Option(help="Port.")] = None,
    workers: Annotated[
        int | None,
        typer.Option(min=1, help="Worker processes sharing the port (MEMTRACE_WORKERS; 1)."),
    ] = None,
) -> None:
    """Run the HTTP service (OpenAPI docs at /docs).

    Each worker is a process of its own that builds the app with ``service.app:create_app``
    (settings from the MEMTRACE_* environment) and its own Neo4j driver; they share nothing but
    the graph, which is what makes several workers, or several machines, safe."""
    import uvicorn

    settings = get_settings()
    uvicorn.run(
        "service.app:create_app",
        factory=True,
        host=host or settings.host,
        port=port or settings.port,
        workers=workers or settings.workers,
        log_level="info",
    )


@neo4j_app.command("start")
def neo4j_start() -> None:
    """Fetch Neo4j (first time only), start it and wait until Bolt answers."""
    local = LocalNeo4j.from_settings(get_settings())
    try:
        with console.status(f"starting Neo4j {local.version} on {local.uri} ..."):
            pid = local.start()
    except Neo4jLaunchError as e:
        err.print(f"[red]{e}[/red]")
        raise typer.Exit(1) from e
    console.print(f"Neo4j {local.version} answers on {local.uri} (pid {pid}, data in {local.home})")


@neo4j_app.command("stop")
def neo4j_stop() -> None:
    """Stop the local Neo4j by its recorded PID."""
    local = LocalNeo4j.from_settings(get_settings())
    console.print("stopped" if local.stop() else "not running")


@neo4j_app.command("status")
def neo4j_status() -> None:
    """Say whether the local Neo4j runs and answers; exit 1 when it does not."""
    local = LocalNeo4j.from_settings(get_settings())
    pid, answers = local.pid(), local.answers()
    console.print(f"pid: {pid or '-'}  bolt {local.uri}: {'answers' if answers else 'no answer'}")
    if not answers:
        raise typer.Exit(1)


@app.command()
def ingest(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="JSON or JSONL.")],
    url: Annotated[str | None, typer.Option(help="Service URL.")] = None,
    project: Annotated[str | None, typer.Option(help="Override each batch's project.")] = None,
    restart: Annotated[
        bool, typer.Option("--restart", help="JSONL: ignore where an earlier run stopped.")
    ] = False,
) -> None:
    """Send every batch in FILE to the service, with progress and a summary.

    A JSONL file (one batch per line) is streamed: memory stays flat whatever its size, progress
    shows bytes, batches and operations/s, and an interrupted run (Ctrl-C, a refused batch, a
    lost service) goes on where it stopped when run again; FILE.memtrace-progress remembers where.
    A JSON file (one batch or a list) is read whole and sent from the start every time."""
    try:
        jsonl = is_jsonl(file)
    except OSError as e:
        err.print(f"[red]cannot read {file}: {e.strerror or e}[/red]")
        raise typer.Exit(2) from e
    if jsonl:
        _ingest_jsonl(file, url, project, restart)
        return
    try:
        batches = list(read_batches(file))
    except BatchFileError as e:
        err.print(f"[red]{e}[/red]")
        raise typer.Exit(2) from e
    totals: dict[str, dict[str, int]] = {"created": {}, "existing": {}}
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("operations"),
        TimeElapsedColumn(),
    )
    with (
        failures_end_in_one_line(err, url),
        batch_client(url) as client,
        Progress(*columns, console=console) as progress,
    ):
        task = progress.add_task(
            f"ingesting {file.name}", total=sum(count_operations(b) for b in batches)
        )
        for index, batch in enumerate(batches):
            if project:
                batch = {**batch, "project": project}
            with _naming_the_batch(index):
                result = client.send_json(batch)
            for key, counts in (("created", result.created), ("existing", result.existing)):
                for kind, n in counts.model_dump().items():
                    totals[key][kind] = totals[key].get(kind, 0) + n
            progress.advance(task, count_operations(batch))
    console.print(
        f"{len(batches)} batch(es): created {totals['created']}, already there {totals['existing']}"
    )


def _ingest_jsonl(file: Path, url: str | None, project: str | None, restart: bool) -> None:
    """Stream a JSONL file from where an earlier run stopped (``cli.ingest_file``)."""
    target = service_url(url)
    if restart:
        ingest_state.clear(file)
    state, note = ingest_state.load(file, target, project)
    if note:
        err.print(note, highlight=False)
    if state.offset:
        err.print(
            f"going on after line {state.line} ({state.batches} batch(es) already stored)",
            highlight=False,
        )
    with failures_end_in_one_line(err, url), batch_client(url) as client:
        try:
            state = send_jsonl(file, client, project, state, console)
        except BatchFileError as e:
            err.print(f"[red]{e}[/red]")
            raise typer.Exit(2) from e
        except KeyboardInterrupt:
            err.print(f"stopped; run the same command again to go on after line {state.line}")
            raise typer.Exit(130) from None
    ingest_state.clear(file)
    console.print(
        f"{state.batches} batch(es): created {state.created}, already there {state.existing}"
    )


@app.command()
def attribute(
    case_id: Annotated[str | None, typer.Argument(help="The failed case to attribute.")] = None,
    all_failed: Annotated[
        bool, typer.Option("--all-failed", help="Every failed case, as one job.")
    ] = False,
    resume: Annotated[
        str | None, typer.Option(help="Resume this stopped or interrupted job.")
    ] = None,
    project: Annotated[str, typer.Option(help="Project of the cases.")] = "default",
    judge: Annotated[
        JudgeChoice | None,
        typer.Option(
            help="heuristic (no LLM), llm (the LLM where the heuristic doubts) or llm-all; a "
            "case stored by another judge is attributed again by this one. Default: a stored "
            "result as it is, else heuristic.",
            show_default=False,
        ),
    ] = None,
    refresh: Annotated[bool, typer.Option(help="Attribute again even if stored.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    url: Annotated[str | None, typer.Option(help="Service URL.")] = None,
) -> None:
    """Name the operation that broke a failed case (or every failed case) and its error type.

    --all-failed runs an attribution job in the service and shows its progress; Ctrl-C stops
    the job, and --resume JOB goes on with it (stored results are not done again)."""
    if sum((case_id is not None, all_failed, resume is not None)) != 1:
        err.print("[red]give a CASE_ID, --all-failed or --resume JOB (one of them)[/red]")
        raise typer.Exit(2)
    lost_hint = "; a job goes on or can be resumed (memtrace attribute --resume JOB)"
    with (
        failures_end_in_one_line(err, url, lost_hint=lost_hint if case_id is None else ""),
        service_client(url) as client,
    ):
        asked = judge.value if judge is not None else None
        if case_id is not None:
            results = _attribute_one(client, project, case_id, asked, refresh)
        else:
            results = _attribution_job(client, project, resume, asked or "heuristic", refresh)
    if as_json:
        console.print_json(json.dumps(results))
    else:
        show(console, attribution_table(results))
    for line in llm_summary(results):
        err.print(line, highlight=False)


def _attribute_one(
    client: httpx.Client, project: str, case_id: str, judge: str | None, refresh: bool
) -> list[dict[str, Any]]:
    """Attribute one case; a 404 for a project that does not exist says so."""
    try:
        return attribute_cases(client, project, case_id, judge, refresh)
    except ServiceRequestError as e:
        if e.usage:
            require_project(client, project)
        raise


@contextmanager
def _naming_the_batch(index: int) -> Iterator[None]:
    """Say which batch of the file was refused or not delivered."""
    try:
        yield
    except RejectedBatch as e:
        e.args = (f"batch {index} refused: {e}",)
        raise
    except ServiceUnavailable as e:
        e.args = (f"batch {index} not sent: {e}",)
        raise


def _attribution_job(
    client: httpx.Client, project: str, job_id: str | None, judge: str, refresh: bool
) -> list[dict[str, Any]]:
    """Start (or resume) a job, follow it to its end, and return its results."""
    job = (
        resume_job(client, project, job_id)
        if job_id
        else start_job(client, project, judge, refresh)
    )
    hint = f"memtrace attribute --resume {job['id']} --project {project}"
    try:
        job = follow_job(client, project, job, err)
    except KeyboardInterrupt:
        err.print(f"stopped job {job['id']}; what it stored is kept. Go on with: {hint}")
        raise typer.Exit(130) from None
    if job["total"] == 0 and job_id is None:  # nothing failed, or no such project: say which
        require_project(client, project)
    err.print(f"job {job['id']} {job['status']}: {progress_line(job)}", highlight=False)
    for failure in job["failures"]:
        err.print(f"  {failure['case_id']}: {failure['message']}", highlight=False)
    if job["status"] != "completed":
        raise ServiceRequestError(
            f"the job is {job['status']}{': ' + job['error'] if job.get('error') else ''}; "
            f"go on with: {hint}",
            usage=False,
        )
    return job_results(client, project, job["id"])


@app.command()
def report(
    project: Annotated[str, typer.Option(help="Project to report on.")] = "default",
    system: Annotated[str | None, typer.Option(help="Only cases of this system.")] = None,
    since: Annotated[str | None, typer.Option(help="Only cases answered at/after (ISO).")] = None,
    until: Annotated[str | None, typer.Option(help="Only cases answered before (ISO).")] = None,
    bucket: Annotated[str, typer.Option(help="Trend period: day or week.")] = "day",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    html: Annotated[
        Path | None, typer.Option(help="Also write a self-contained HTML page with plots.")
    ] = None,
    url: Annotated[str | None, typer.Option(help="Service URL.")] = None,
) -> None:
    """How the project's attributed failures split by system, error type and operation."""
    with failures_end_in_one_line(err, url):
        if html is not None and not html.parent.is_dir():  # before the service does the work
            raise CommandError(f"cannot write {html}: no folder {html.parent}", usage=True)
        with service_client(url, timeout_s=120) as client:
            result = fetch_report(client, project, system, since, until, bucket)
            if result.totals.cases == 0:  # a project that does not exist reads as empty
                require_project(client, project)
        if html is not None:
            from service.reports.html import render_report  # matplotlib: only for a page

            html.write_text(render_report(result), encoding="utf-8")
    if as_json:
        console.print_json(report_json(result))
    else:
        for table in report_tables(result):
            show(console, table)
    if html is not None:
        err.print(f"wrote {html}")


@app.command()
def audit(
    name: Annotated[str | None, typer.Argument(help="The audit to run; none lists them.")] = None,
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="An audit parameter, NAME=VALUE.")
    ] = None,
    project: Annotated[str, typer.Option(help="Project to audit.")] = "default",
    skip: Annotated[int, typer.Option(min=0, help="Rows to skip (next_skip pages).")] = 0,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many rows.")] = 100,
    cursor: Annotated[
        str | None,
        typer.Option(
            help="Where the page starts (next_cursor pages: deleted_then_needed, retrieval_misses)."
        ),
    ] = None,
    show_list: Annotated[bool, typer.Option("--list", help="List the audits.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    url: Annotated[str | None, typer.Option(help="Service URL.")] = None,
) -> None:
    """Run an audit of the project's graph (lost messages, degraded updates, ...) and print its
    rows; without NAME (or with --list), list the audits. Exit code 2 for an unknown audit, a
    bad parameter or no such project, 1 when the service fails or cannot be reached."""
    try:
        params = parse_params(param or [])
    except ValueError as e:
        err.print(f"[red]{e}[/red]")
        raise typer.Exit(2) from e
    listing = name is None or show_list
    with failures_end_in_one_line(err, url, usage_exit=2), service_client(url) as client:
        if listing:
            audits = list_audits(client)
        else:
            page = run_audit(client, str(name), project, params, skip, limit, cursor)
            if not page["rows"]:  # a project that does not exist reads as empty
                require_project(client, project)
    if as_json:
        console.print_json(json.dumps(audits if listing else page))
    else:
        show(console, audits_table(audits) if listing else rows_table(page))


@app.command()
def projects(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    url: Annotated[str | None, typer.Option(help="Service URL.")] = None,
) -> None:
    """List the projects (those the API key may see) with their counts and last activity."""
    with failures_end_in_one_line(err, url), service_client(url) as client:
        found = list_projects(client)
    if as_json:
        console.print_json(json.dumps(found))
    else:
        show(console, projects_table(found))


@app.command()
def cases(
    project: Annotated[str, typer.Option(help="Project of the cases.")] = "default",
    verdict: Annotated[
        str | None, typer.Option(help="Only cases with this verdict: failed, passed, unknown.")
    ] = None,
    q: Annotated[str | None, typer.Option("--q", help="Only questions containing this.")] = None,
    since: Annotated[
        str | None, typer.Option(help="Only cases answered at/after (ISO; no zone: UTC).")
    ] = None,
    system: Annotated[str | None, typer.Option(help="Only cases of this system.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many cases.")] = 1000,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    url: Annotated[str | None, typer.Option(help="Service URL.")] = None,
) -> None:
    """List the project's cases: question, verdict, when, system, session, attribution."""
    filters = {"verdict": verdict, "q": q, "since": since, "system": system}
    with failures_end_in_one_line(err, url), service_client(url) as client:
        found = list_cases(client, project, filters, limit)
    if as_json:
        console.print_json(json.dumps(found))
    elif not found:
        console.print(f"no cases in {project!r} match these filters", highlight=False)
    else:
        show(console, cases_table(found, project))


@app.command()
def jobs(
    project: Annotated[str, typer.Option(help="Project of the jobs.")] = "default",
    limit: Annotated[int, typer.Option(min=1, max=100, help="At most this many.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    url: Annotated[str | None, typer.Option(help="Service URL.")] = None,
) -> None:
    """List the project's attribution jobs, newest first (resume one with
    memtrace attribute --resume JOB)."""
    with failures_end_in_one_line(err, url), service_client(url) as client:
        found = list_jobs(client, project, limit)
        if not found:
            require_project(client, project)
    if as_json:
        console.print_json(json.dumps(found))
    else:
        show(console, jobs_table(found, project))


@app.command("show")
def show_case(
    case_id: Annotated[str, typer.Argument(help="The case to show.")],
    project: Annotated[str, typer.Option(help="Project of the case.")] = "default",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    url: Annotated[str | None, typer.Option(help="Service URL.")] = None,
) -> None:
    """Show a case, its attribution if it has one, and the tree of operations and units its
    answer depends on."""
    with failures_end_in_one_line(err, url), service_client(url) as client:
        shown = fetch_case(client, project, case_id)
    if as_json:
        console.print_json(json.dumps(shown))
    else:
        print_case(console, shown)


@app.command("case-from-trace")
def case_from_trace(
    case_id: Annotated[str, typer.Argument(help="The case's id.")],
    trace_id: Annotated[str, typer.Argument(help="The exported trace's id (32 hex digits).")],
    expected: Annotated[str, typer.Option(help="The right answer.")],
    verdict: Annotated[str, typer.Option(help="failed, passed or unknown.")] = "failed",
    question: Annotated[
        str | None, typer.Option(help="The question (default: found in the trace's spans).")
    ] = None,
    project: Annotated[str, typer.Option(help="Project the trace went to.")] = "default",
    url: Annotated[str | None, typer.Option(help="Service URL.")] = None,
) -> None:
    """Record a case on a trace already sent over OTLP (POST /otlp/cases): its answer, question
    and conversation are found in the trace's spans."""
    body = {"case_id": case_id, "trace_id": trace_id, "verdict": verdict}
    body |= {"expected_answer": expected, **({"question": question} if question else {})}
    with failures_end_in_one_line(err, url), service_client(url) as client:
        found = checked(client.post("/otlp/cases", params={"project": project}, json=body))
    state = "recorded" if found["created"] else "already recorded"
    console.print(
        f"case {case_id} {state}: answer of span {found['span_id']}, "
        f"question {found['case']['question']!r}",
        highlight=False,
    )


@app.command("import-graph")
def import_graph(
    path: Annotated[Path, typer.Argument(exists=True, help="A graph JSON file or a folder.")],
    project: Annotated[str, typer.Option(help="Project to import into.")] = "default",
    url: Annotated[str | None, typer.Option(help="Service URL.")] = None,
) -> None:
    """Import MemTraceBench execution graphs (the MemTrace paper's format) into a project.

    Each file's ids are prefixed with its graph_id (or file name), so graphs never collide.
    """
    files = list(iter_graph_files(path))
    totals = {"operations": 0, "cases": 0, "labelled": 0, "warnings": 0}
    with failures_end_in_one_line(err, url), service_client(url) as client:
        for file in track(files, description="importing", console=console):
            try:
                graph = load_execution_graph(file)
            except ValueError as e:
                err.print(f"[red]{e}[/red]")
                raise typer.Exit(2) from e
            prefix = str(graph.get("graph_id") or file.stem)[:64]
            response = client.post(
                "/import/execution-graph",
                params={"project": project, "id_prefix": prefix},
                json=graph,
            )
            try:
                result = checked(response)
            except ServiceRequestError as e:
                raise ServiceRequestError(f"{file}: {e}", usage=e.usage) from None
            totals["operations"] += result["ingested"]["created"]["operations"]
            totals["cases"] += result["ingested"]["created"]["cases"]
            totals["labelled"] += result["labelled_cases"]
            totals["warnings"] += len(result["warnings"])
            for warning in result["warnings"]:  # what the importer skipped or guessed, and where
                err.print(f"[yellow]warning: {warning}[/yellow]", markup=True, highlight=False)
    console.print(
        f"{len(files)} graph(s): {totals['operations']} operations and {totals['cases']} cases "
        f"created, {totals['labelled']} labelled, {totals['warnings']} warning(s)"
    )


@app.command()
def demo(
    trace: Annotated[Path, typer.Option(help="Trace to ingest.")] = Path(
        "examples/demo_trace.json"
    ),
) -> None:
    """Start Neo4j and the service, ingest the example trace, show its failed cases."""
    from cli.demo import run_demo

    with failures_end_in_one_line(err, None):
        code = run_demo(trace, console)
    raise typer.Exit(code)


@app.command()
def stop() -> None:
    """Stop the service started by `memtrace demo` and the local Neo4j."""
    from cli.demo import stop_background_service

    stop_background_service(console)
    neo4j_stop()


prompt_commands.register(app)
judge_commands.register(app)
embedding_commands.register(app)
mcp_command.register(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
