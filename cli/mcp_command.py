"""``memtrace mcp`` (registered by ``register``): the MCP server of ``cli.mcp_server`` over stdio
or streamable HTTP. The ``mcp`` package is an optional extra, imported only when the command
runs, so every other command works without it."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from rich.console import Console

from cli.http import api_key, service_url

err = Console(stderr=True)
MCP_PATH = "/mcp"


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


def register(app: typer.Typer) -> None:
    """Add ``mcp`` to the ``memtrace`` command."""

    @app.command()
    def mcp(
        transport: Annotated[
            Transport, typer.Option(help="stdio (an agent starts the command) or http.")
        ] = Transport.stdio,
        host: Annotated[str, typer.Option(help="http: bind address.")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="http: port.")] = 8765,
        project: Annotated[
            str, typer.Option(help="The project tools read when a call names none.")
        ] = "default",
        url: Annotated[str | None, typer.Option(help="Service URL.")] = None,
    ) -> None:
        """Serve MemTrace's read tools to coding agents over MCP: list projects and failed
        cases, attribute and explain a case, its lineage, audits, read-only Cypher.

        Every tool calls the running service with the API key (--api-key or MEMTRACE_API_KEY;
        over http, a request's own Authorization: Bearer key wins), so the key's projects are
        all a tool can read. Over http the server listens on HOST:PORT/mcp."""
        try:
            from cli.mcp_server import build_server
        except ImportError as e:
            err.print(
                f"memtrace mcp needs the mcp package ({e}): pip install 'memtrace-server[mcp]'",
                style="red",
                highlight=False,
                markup=False,
            )
            raise typer.Exit(1) from None
        server = build_server(service_url(url), project, api_key())
        if transport is Transport.stdio:
            server.run("stdio")
            return
        err.print(
            f"MCP over streamable HTTP at http://{host}:{port}{MCP_PATH}, reading the service "
            f"at {service_url(url)}",
            highlight=False,
            markup=False,
        )
        server.run("streamable-http", host=host, port=port, streamable_http_path=MCP_PATH)
