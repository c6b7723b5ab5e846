"""``memtrace embeddings serve``: all-MiniLM-L6-v2 on the CPU behind an OpenAI-compatible
``/v1/embeddings`` (``service.embeddings``), for ``MEMTRACE_EMBEDDINGS_BASE_URL`` where no other
endpoint is at hand. Needs the ``embeddings`` extra and the model package (docs/attribution.md).
"""

from __future__ import annotations

from typing import Annotated

import typer

embeddings_app = typer.Typer(
    help="A local embedding model (all-MiniLM-L6-v2, CPU) for the evidence search.",
    no_args_is_help=True,
)


@embeddings_app.command("serve")
def serve(
    host: Annotated[str, typer.Option(help="Bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8081,
) -> None:
    """Serve POST /v1/embeddings; point MEMTRACE_EMBEDDINGS_BASE_URL at http://HOST:PORT/v1 and
    set MEMTRACE_EMBEDDINGS_MODEL=all-MiniLM-L6-v2."""
    import uvicorn

    uvicorn.run(
        "service.embeddings.server:create_app", factory=True, host=host, port=port, log_level="info"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(embeddings_app, name="embeddings")
