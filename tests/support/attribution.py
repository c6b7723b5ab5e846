"""Asking the running service for an attribution."""

from __future__ import annotations

import httpx


def attribute(client: httpx.Client, project: str, case_id: str, **body: object) -> httpx.Response:
    return client.post(f"/attribute/{case_id}", params={"project": project}, json=body or None)
