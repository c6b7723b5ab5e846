"""Where things live (issue 11's done-when checks), so the layout cannot drift back:

- no command-line code under ``service/`` (the ``memtrace`` command is ``cli/``);
- every model a route answers or reads is defined in the ``models`` module of the feature
  package it belongs to (``service/<feature>/models.py``), in ``service/error_models.py`` (the
  error body every route may answer), or is a wire model of ``memtrace_client.models``, which
  ``service.traces.models`` re-exports);
- no error body (``{"error": ...}``) is built outside ``service/http_errors.py``;
- the docs' "The code" page (docs/code.md) names the folders the tree has, and only those;
- no import cycle among the project's modules, deferred imports (inside functions or under
  ``TYPE_CHECKING``) included: a circle that only works because an import is deferred is still
  a circle a reader has to untangle.
- no module outside a feature package imports the feature's internals: only its ``service`` and
  ``models`` (and what ``FACE_EXTRAS`` names, with why);
- the attribution engine imports no driver, Cypher or row decoding: the repository hands it
  typed reads (issue 24);
- one chat client: no OpenAI client is made and no chat completion asked for outside
  ``service/llm/client.py`` (in ``service/`` and the closed-loop benchmark), but for the
  embeddings client of the evidence search.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import subprocess
import types
import typing
from collections.abc import Iterator
from pathlib import Path

from fastapi import APIRouter
from fastapi.routing import APIRoute
from pydantic import BaseModel

import service

REPO = Path(__file__).resolve().parents[2]
SERVICE = REPO / "service"
MODEL_HOMES = ("service.error_models", "memtrace_client.models")
FEATURE_MODELS = re.compile(r"^service(\.\w+)+\.models$")
"""A feature package's own models (``service.adhoc.models``): where its routes' models live."""
CLI_PACKAGES = {"cli", "typer", "click", "rich"}


def _modules(folder: Path) -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(folder.rglob("*.py")):
        yield path.relative_to(REPO), ast.parse(path.read_text(encoding="utf-8"))


def test_no_command_line_code_in_the_service() -> None:
    found = []
    for path, tree in _modules(SERVICE):
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            found += [f"{path}:{node.lineno} {n}" for n in names if n.split(".")[0] in CLI_PACKAGES]
    assert found == []


def _models(annotation: object) -> Iterator[type[BaseModel]]:
    """Every pydantic model in a type annotation, and in the fields of those models."""
    seen: set[type] = set()
    stack = [annotation]
    while stack:
        current = stack.pop()
        if isinstance(current, type) and issubclass(current, BaseModel):
            if current not in seen:
                seen.add(current)
                yield current
                stack += [f.annotation for f in current.model_fields.values()]
        else:
            stack += list(typing.get_args(current))
            if isinstance(current, types.UnionType):
                stack += list(current.__args__)


def _api_routes() -> list[APIRoute]:
    """The routes of every ``APIRouter`` the server's modules define (where routes live; the
    app itself only includes them)."""
    routers: dict[int, APIRouter] = {}
    for info in pkgutil.walk_packages(service.__path__, "service."):
        for value in vars(importlib.import_module(info.name)).values():
            if isinstance(value, APIRouter):
                routers[id(value)] = value
    return [r for router in routers.values() for r in router.routes if isinstance(r, APIRoute)]


def test_every_route_model_is_defined_in_the_models_home() -> None:
    outside = set()
    for route in _api_routes():
        annotations = [route.response_model]
        annotations += [r.get("model") for r in route.responses.values()]
        annotations += [p.field_info.annotation for p in route.dependant.body_params]
        for annotation in annotations:
            for model in _models(annotation):
                module = model.__module__
                if not (module.startswith(MODEL_HOMES) or FEATURE_MODELS.match(module)):
                    outside.add(f"{model.__module__}.{model.__qualname__} ({route.path})")
    assert sorted(outside) == []


def test_the_check_sees_models() -> None:
    """The route walk finds models at all (a check that finds nothing passes trivially)."""
    found = {m.__name__ for route in _api_routes() for m in _models(route.response_model)}
    assert {"AttributionResult", "Cost", "Report", "TrendRow", "IngestResult"} <= found


def _error_bodies(tree: ast.Module) -> Iterator[int]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            if any(isinstance(k, ast.Constant) and k.value == "error" for k in node.keys):
                yield node.lineno
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            if name == "ErrorBody" or (
                name == "dict" and any(k.arg == "error" for k in node.keywords)
            ):
                yield node.lineno


def test_error_bodies_are_built_in_the_error_module_only() -> None:
    found = [
        f"{path}:{line}"
        for path, tree in _modules(SERVICE)
        if path != Path("service/http_errors.py")
        for line in _error_bodies(tree)
    ]
    assert found == []
    # and the error module does build them (the check looks for the right shape)
    assert list(_error_bodies(ast.parse((SERVICE / "http_errors.py").read_text())))


def _readme_tree() -> dict[str, set[str]]:
    """The folders docs/code.md's tree block names: top level, and one level below."""
    page = (REPO / "docs" / "code.md").read_text(encoding="utf-8")
    block = page.split("```", 2)[1]
    listed: dict[str, set[str]] = {}
    parent = ""
    for line in block.splitlines():
        match = re.match(r"^( *)([\w.-]+(?:/[\w.-]+)*/)\s", line + " ")
        if not match:
            continue
        indent, name = match.groups()
        parts = name.rstrip("/").split("/")
        if not indent:
            parent = parts[0]
            listed.setdefault(parent, set()).update(parts[1:2])
        elif len(indent) == 2:
            listed[parent].add(parts[0])
    return listed


def _tracked_folders() -> dict[str, set[str]]:
    files = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    tree: dict[str, set[str]] = {}
    for file in files:
        parts = file.split("/")
        if len(parts) < 2 or parts[0].startswith("."):
            continue
        tree.setdefault(parts[0], set())
        if len(parts) > 2:
            tree[parts[0]].add(parts[1])
    return tree


def test_the_code_page_names_the_folders_of_the_tree() -> None:
    listed = _readme_tree()
    tracked = _tracked_folders()
    assert set(listed) == set(tracked), "top-level folders"
    for parent, children in listed.items():
        assert children <= tracked[parent], f"{parent}/ lists folders it does not have"
    # Every package of the server is named: that is where a newcomer looks first.
    packages = {p.parent.name for p in SERVICE.glob("*/__init__.py") if p.parent.parent == SERVICE}
    assert packages <= listed["service"], "service/ packages missing from docs/code.md"


PACKAGES = ("service", "ingest", "cli", "graph_schema", "cypher", "clients/python/memtrace_client")


def _module_names() -> dict[str, Path]:
    """Every module of the project's packages by dotted name (a package by its own name)."""
    names = {}
    for package in PACKAGES:
        root = REPO / package
        base = root.parent
        for path in root.rglob("*.py"):
            parts = path.relative_to(base).with_suffix("").parts
            names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _imports(names: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project modules it imports anywhere in its text. ``from a import b`` names
    ``a.b`` when that is a module, else ``a``; a submodule's own parent packages, which Python
    imports first anyway, are not counted as what it imports."""
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        is_package = path.name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                for alias in node.names:
                    found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in names else base)
        parents = {name.rsplit(".", k)[0] for k in range(1, name.count(".") + 1)}
        graph[name] = {m for m in found if m in names and m != name and m not in parents}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle() -> None:
    graph = _imports(_module_names())
    assert len(graph) > 100  # the walk found the project's modules
    assert _cycles(graph) == []
    # and the check sees a circle when there is one
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


CHAT_CLIENT = Path("service/llm/client.py")
EMBEDDINGS_CLIENT = Path("service/attribution/search.py")
"""The embeddings API's own client (it asks for vectors, never for a chat completion)."""
CLOSED_LOOP = ("benchmarks/closed_loop/loop.py", "benchmarks/closed_loop/system.py")


def _chat_client_uses(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Where a module makes an OpenAI client or asks for a chat completion itself."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            if name in {"OpenAI", "AsyncOpenAI"}:
                yield node.lineno, f"{name}("
        elif isinstance(node, ast.Attribute) and node.attr == "completions":
            yield node.lineno, ".completions"


def test_one_chat_client() -> None:
    """Every chat completion goes through ``service/llm/client.py``: its budget hooks, backoff,
    structured output, token parameter and error sorting are the only ones there are."""
    found = []
    trees = list(_modules(SERVICE)) + [
        (Path(p), ast.parse((REPO / p).read_text(encoding="utf-8"))) for p in CLOSED_LOOP
    ]
    for path, tree in trees:
        uses = list(_chat_client_uses(tree))
        if path == EMBEDDINGS_CLIENT:
            uses = [u for u in uses if u[1] != "AsyncOpenAI("]
        if path != CHAT_CLIENT:
            found += [f"{path}:{line} {what}" for line, what in uses]
    assert found == []
    # and the check sees the one client's own uses (it looks for the right shape)
    made = {what for _, what in _chat_client_uses(ast.parse((REPO / CHAT_CLIENT).read_text()))}
    assert made == {"AsyncOpenAI(", ".completions"}


KERNEL = ("errors", "http_errors", "settings", "db", "auth")
"""The server's kernel: what every feature stands on, importing none of them."""


def test_the_kernel_imports_no_feature_and_no_ui() -> None:
    """The error module answers pages through ``app.state.page_errors`` (the UI's), not by
    importing the UI: the kernel sits at the bottom of ``service/``."""
    graph = _imports(_module_names())
    features = {p.parent.name for p in SERVICE.glob("*/__init__.py")} - {"models", "neo4j_local"}
    upward = {
        (f"service.{module}", target)
        for module in KERNEL
        for target in graph[f"service.{module}"]
        if target.startswith("service.") and target.split(".")[1] in features
    }
    assert upward == set()
    assert "ui" in features and "adhoc" in features  # the check knows the packages


FEATURE_FACE = ("service", "models")
"""What a feature offers the rest of the code: its service functions and its models. Its routes,
repository and helpers (the engine, the row cache, a report's plots) are its own business."""
FACE_EXTRAS = {
    "service.reports.tables": "the terminal shows a fetched report with the server's tables",
    "service.reports.html": "`memtrace report --html` writes the server's page from a report",
}
LIBRARIES = {"llm"}
"""Packages with no routes that features build on (the one chat client): all of it is public."""
ASSEMBLER_REACH = ("routes", "errors", "login")
"""``service.app`` registers each feature's router (and the UI's error pages and key form)."""


def _internal_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports of a feature's internals by a module outside that feature. A repository may use
    another feature's repository, to write or read inside the transaction it already holds (a
    prompt version with its cases, an OTLP export's lineage, an attribution's case)."""
    features = {p.parent.name for p in SERVICE.glob("*/__init__.py")} - {"neo4j_local"}
    found = []
    for module, targets in graph.items():
        for target in targets:
            parts = target.split(".")
            if parts[0] != "service" or len(parts) < 3 or parts[1] not in features:
                continue
            if module.split(".")[:2] == parts[:2] or parts[1] in LIBRARIES:
                continue
            last = parts[-1]
            if last in FEATURE_FACE or target in FACE_EXTRAS:
                continue
            if last == "repository" and module.endswith("repository"):
                continue
            if module == "service.app" and last in ASSEMBLER_REACH:
                continue
            found.append(f"{module} -> {target}")
    return sorted(found)


def test_no_module_outside_a_feature_imports_its_internals() -> None:
    graph = _imports(_module_names())
    assert _internal_imports(graph) == []
    # and the check sees one: the UI reading cases' repository instead of their service
    graph["service.ui.service"] = graph["service.ui.service"] | {"service.cases.repository"}
    assert _internal_imports(graph) == ["service.ui.service -> service.cases.repository"]


ENGINE = ("graph", "engine", "walk", "scope", "construction", "confidence", "search", "structured")
"""The attribution engine's modules under ``service/attribution/`` (and its ``judges/``): they walk
and judge what the repository side (``repository``, ``rows``, ``row_cache``, ``scope_reads``...)
read from Neo4j and decoded."""
ROW_SIDE = ("neo4j", "cypher", "service.attribution.rows", "service.attribution.repository")


def _imported(tree: ast.Module) -> set[str]:
    """Every module name a module imports, the project's and others' (absolute imports only,
    as the project writes them)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_the_attribution_engine_gets_typed_reads_not_rows() -> None:
    """No driver, Cypher or row decoding in the engine: the repository hands it ``NodeRead``s
    and ``Node``s (``service/attribution/rows.py``), so no dict row crosses into it."""
    folder = SERVICE / "attribution"
    paths = [folder / f"{name}.py" for name in ENGINE] + sorted((folder / "judges").glob("*.py"))
    reaching = sorted(
        f"{path.relative_to(REPO)} imports {name}"
        for path in paths
        for name in _imported(ast.parse(path.read_text(encoding="utf-8")))
        if name.startswith(ROW_SIDE)
    )
    assert reaching == []
    # and the check sees the repository side reading rows
    assert any(
        n.startswith("neo4j") for n in _imported(ast.parse((folder / "rows.py").read_text()))
    )
