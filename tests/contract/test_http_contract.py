"""What every HTTP answer promises, whatever route was asked for: the one error body, and API
docs that render on a machine without internet."""

from __future__ import annotations

import re

import httpx


def test_unknown_routes_and_wrong_methods_answer_the_error_body(client: httpx.Client) -> None:
    missing = client.get("/no-such-route")
    assert missing.status_code == 404
    assert missing.json() == {"error": "not_found", "message": "Not Found", "details": None}
    wrong = client.delete("/cases")
    assert wrong.status_code == 405
    assert wrong.json()["error"] == "method_not_allowed"
    assert "GET" in wrong.headers["allow"]


def test_api_docs_load_nothing_from_another_host(client: httpx.Client) -> None:
    for page in ("/docs", "/redoc"):
        html = client.get(page)
        assert html.status_code == 200
        sources = re.findall(r'(?:src|href)="([^"]+)"', html.text)
        scripts = re.findall(r"url: '([^']+)'", html.text)
        assert sources, page
        for url in sources + scripts:
            assert url.startswith("/"), f"{page} loads {url} from elsewhere"
            assert client.get(url).status_code == 200, url
        assert "swagger-ui-bundle.js" in html.text or "redoc.standalone.js" in html.text
