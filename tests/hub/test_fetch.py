"""verihub's guarded fetches over httpx, with the network replaced by ``httpx.MockTransport``:
size caps, redirects, credentials, timeouts and the hub client's error messages."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import httpx
import pytest

import hub.client.api as api
import hub.registry.fetch as fetch
from hub.client.api import HubError, hub_request
from hub.env.errors import UsageError
from hub.registry.fetch import FetchError, HTTPStatusError, download, open_url


def _transport(seen: list[httpx.Request], routes: dict[str, httpx.Response]) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        request.read()
        seen.append(request)
        return routes.get(request.url.path, httpx.Response(404, json={"error": "no such thing"}))

    return httpx.MockTransport(answer)


def _hub_via(monkeypatch: pytest.MonkeyPatch, transport: httpx.BaseTransport) -> None:
    monkeypatch.setattr(api, "open_url", functools.partial(open_url, transport=transport))


def test_a_download_over_its_size_cap_is_refused_and_one_within_it_is_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[httpx.Request] = []
    body = b"x" * 5000
    transport = _transport(seen, {"/big.whl": httpx.Response(200, content=body)})
    monkeypatch.setattr(fetch, "open_url", functools.partial(open_url, transport=transport))
    with pytest.raises(UsageError, match="is larger than 4,999 bytes; refused"):
        download("https://files.example/big.whl", tmp_path, what="wheel", timeout=5, max_bytes=4999)
    pin = hashlib.sha256(body).hexdigest()
    url = f"https://files.example/big.whl#sha256={pin}"
    got = download(url, tmp_path, what="wheel", timeout=5, max_bytes=5000)
    assert got.read_bytes() == body
    assert all(r.headers["Accept-Encoding"] == "identity" for r in seen)  # nothing compressed to cap


def test_read_in_pieces_returns_the_body_in_order() -> None:
    transport = _transport([], {"/c.json": httpx.Response(200, content=b"0123456789")})
    with open_url("https://cat.example/c.json", what="catalogue", timeout=5, transport=transport) as resp:
        assert resp.status == 200
        assert [resp.read(4), resp.read(4), resp.read(4), resp.read(4)] == [b"0123", b"4567", b"89", b""]


def test_a_post_redirected_by_303_becomes_a_get_without_body_or_credentials() -> None:
    seen: list[httpx.Request] = []
    routes = {
        "/api": httpx.Response(303, headers={"Location": "/done"}),
        "/done": httpx.Response(200, json={"ok": True}),
    }
    headers = {"Authorization": "Bearer vh_secret", "Content-Type": "application/json"}
    with open_url(
        "https://hub.example/api",
        what="hub",
        timeout=5,
        method="POST",
        headers=headers,
        data=b"{}",
        transport=_transport(seen, routes),
    ) as resp:
        assert resp.read() == b'{"ok":true}'
    first, second = seen
    assert (first.method, first.content, first.headers["Authorization"]) == (
        "POST",
        b"{}",
        "Bearer vh_secret",
    )
    assert (second.method, second.content) == ("GET", b"")
    assert "Authorization" not in second.headers and "Content-Type" not in second.headers


def test_a_put_is_not_redirected_and_a_redirect_loop_ends() -> None:
    seen: list[httpx.Request] = []
    routes = {"/loop": httpx.Response(302, headers={"Location": "/loop"})}
    transport = _transport(seen, routes)
    with pytest.raises(HTTPStatusError, match="HTTP Error 302") as err:
        open_url(
            "https://hub.example/loop", what="hub", timeout=5, method="PUT", data=b"1", transport=transport
        )
    assert err.value.status == 302 and len(seen) == 1
    with pytest.raises(FetchError, match="more than 10 redirects"):
        open_url("https://hub.example/loop", what="hub", timeout=5, transport=transport)
    assert len(seen) == 1 + 11


def test_url_credentials_go_to_that_url_only_and_never_into_errors() -> None:
    seen: list[httpx.Request] = []
    routes = {"/f": httpx.Response(302, headers={"Location": "https://cdn.example/g"})}
    with pytest.raises(HTTPStatusError) as err:
        open_url(
            "https://u:s3cret@files.example/f", what="wheel", timeout=5, transport=_transport(seen, routes)
        )
    first, second = seen
    assert first.headers["Authorization"].startswith("Basic ") and "Authorization" not in second.headers
    assert "s3cret" not in str(first.url) and "s3cret" not in str(err.value)


def test_the_hub_client_reports_the_hubs_error_message(monkeypatch: pytest.MonkeyPatch) -> None:
    routes = {"/api/v1/whoami": httpx.Response(403, json={"error": "token revoked"})}
    _hub_via(monkeypatch, _transport([], routes))
    with pytest.raises(HubError, match="the hub answered 403: token revoked") as err:
        hub_request("https://hub.example", "/api/v1/whoami", token="vh_x")
    assert err.value.status == 403
    _hub_via(monkeypatch, _transport([], {"/api/v1/whoami": httpx.Response(200, json={"name": "me"})}))
    assert hub_request("https://hub.example", "/api/v1/whoami", token="vh_x") == {"name": "me"}


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        (httpx.ConnectError("[Errno 111] Connection refused"), "cannot reach the hub at https://hub.example"),
        (httpx.ConnectTimeout("timed out"), "cannot reach the hub at https://hub.example"),
        (httpx.ReadTimeout("timed out"), r"the connection to https://hub.example failed \(ReadTimeout\)"),
        (httpx.RemoteProtocolError("dropped"), r"failed \(RemoteProtocolError\); try again"),
    ],
)
def test_the_hub_client_names_network_failures(
    monkeypatch: pytest.MonkeyPatch, failure: httpx.HTTPError, message: str
) -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise failure

    _hub_via(monkeypatch, httpx.MockTransport(fail))
    with pytest.raises(HubError, match=message):
        hub_request("https://hub.example", "/api/v1/whoami")


def test_a_pushed_file_is_streamed_with_its_length(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: list[httpx.Request] = []
    _hub_via(monkeypatch, _transport(seen, {"/api/v1/results": httpx.Response(200, json={"created": True})}))
    archive = tmp_path / "run.tar.gz"
    archive.write_bytes(b"z" * 200_000)
    answer = hub_request("https://hub.example", "/api/v1/results", token="t", method="POST", body=archive)
    assert answer == {"created": True}
    (request,) = seen
    assert request.content == b"z" * 200_000 and request.headers["Content-Length"] == "200000"
    assert "Transfer-Encoding" not in request.headers
