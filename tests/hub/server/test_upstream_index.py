"""The index beyond the hosted environments: ``/simple/verihub/`` serves the hub's own wheel,
other names redirect to the upstream index, and the names that must never go upstream
(hosted ones, private ones included; ``verihub``; the ``verihub-`` prefix) stay here."""

from __future__ import annotations

import hashlib
import http.server
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hub.server.core.config import HubConfig
from hub.server.packages.publish import PublishError, check_upstream_name
from tests.hub.server.conftest import Hub, make_tokens


class _Upstream(http.server.BaseHTTPRequestHandler):
    """A PEP 503 upstream that has exactly one project, ``taken``; ``broken`` answers 500 and
    ``moved`` redirects to a ``file:`` URL."""

    def do_GET(self) -> None:  # noqa: N802 (the handler's API)
        code = {"/simple/taken/": 200, "/simple/broken/": 500, "/simple/moved/": 302}.get(self.path, 404)
        self.send_response(code)
        if code == 302:
            self.send_header("Location", "file:///etc/passwd")
        self.end_headers()
        self.wfile.write(b"<a href='taken-1.0-py3-none-any.whl'>taken</a>" if code == 200 else b"")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def upstream() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()


def _hub(tmp_path: Path, upstream: str) -> Iterator[Hub]:
    from starlette.testclient import TestClient

    from hub.server.app import create_app

    config = HubConfig(data=tmp_path / "hub", lease_s=30.0, review_fast=True, upstream_index=upstream)
    tokens = make_tokens(config)
    with TestClient(create_app(config), follow_redirects=False) as client:
        yield Hub(config, client, tokens)


@pytest.fixture
def uphub(tmp_path: Path, upstream: str) -> Iterator[Hub]:
    yield from _hub(tmp_path, upstream)


def _seed(hub: Hub, project: str, *, private: bool) -> None:
    from hub.server.accounts.users import get_owner
    from hub.server.core.models import Environment

    with hub.sessions()() as s, s.begin():
        owner = get_owner(s, "alice")
        assert owner is not None
        s.add(
            Environment(
                owner_id=owner.id, env_id=project, distribution=project, project=project, private=private
            )
        )


def test_unknown_names_redirect_upstream_and_the_hubs_own_do_not(uphub: Hub, upstream: str) -> None:
    r = uphub.client.get("/simple/some-dependency/")
    assert r.status_code == 302 and r.headers["location"] == f"{upstream}some-dependency/"
    # other spellings are normalised here first, then redirected under the normal name
    assert uphub.client.get("/simple/Some_Dependency/").headers["location"] == "/simple/some-dependency/"
    assert uphub.client.get("/simple-unreviewed/numpy/").headers["location"] == f"{upstream}numpy/"
    # a private environment's name is 404 to others, never sent upstream (where anyone may register it)
    _seed(uphub, "hidden", private=True)
    assert uphub.client.get("/simple/hidden/").status_code == 404
    # the hub's own: its prefix and verihub itself (no wheel built in this hub) stay 404
    assert uphub.client.get("/simple/verihub-nothing-yet/").status_code == 404
    assert uphub.client.get("/simple/verihub/").status_code == 404


def test_no_upstream_means_404(tmp_path: Path) -> None:
    for hub in _hub(tmp_path, "none"):
        assert hub.config.upstream == "" and hub.client.get("/simple/numpy/").status_code == 404


def test_the_hubs_own_wheel_is_listed_pinned_and_served(tmp_path: Path) -> None:
    config = HubConfig(data=tmp_path / "hub")
    config.own_wheel_dir.mkdir(parents=True)
    body = b"PK not really a wheel, but bytes to hash"
    (config.own_wheel_dir / "verihub-9.8.7-py3-none-any.whl").write_bytes(body)
    sha = hashlib.sha256(body).hexdigest()
    for hub in _hub(tmp_path, ""):
        assert ">verihub<" in hub.client.get("/simple/").text
        page = hub.client.get("/simple/verihub/").text
        assert f'href="/files/{sha}/verihub-9.8.7-py3-none-any.whl#sha256={sha}"' in page
        got = hub.client.get("/simple/verihub/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
        assert got.json()["versions"] == ["9.8.7"] and got.json()["files"][0]["hashes"] == {"sha256": sha}
        assert hub.client.get(f"/files/{sha}/verihub-9.8.7-py3-none-any.whl").content == body
        assert hub.client.get(f"/files/{'0' * 64}/verihub-9.8.7-py3-none-any.whl").status_code == 404


def test_push_names_that_exist_upstream_are_refused(upstream: str) -> None:
    with pytest.raises(PublishError, match="verihub-taken"):
        check_upstream_name("taken", upstream)
    check_upstream_name("free", upstream)
    check_upstream_name("verihub-taken", upstream)  # the prefix is never looked up
    check_upstream_name("taken", "")  # no upstream, nothing to confuse it with
    with pytest.raises(PublishError, match="hub's own"):
        check_upstream_name("verihub", "")
    with pytest.raises(PublishError, match="push again later"):
        check_upstream_name("broken", upstream)
    with pytest.raises(PublishError, match="could not be asked.*redirects to file:"):
        check_upstream_name("moved", upstream)  # a redirect off http(s) is not followed
    with pytest.raises(PublishError, match="could not be reached"):
        check_upstream_name("free", "http://127.0.0.1:9/simple/")
    check_upstream_name("verihub-free", "http://127.0.0.1:9/simple/")  # offline-safe under the prefix


def test_a_push_under_a_name_taken_upstream_is_refused(
    tmp_path: Path, upstream: str, arith_bundle: Any, variant: Any
) -> None:
    for hub in _hub(tmp_path, upstream):
        r = hub.push(variant(arith_bundle, distribution="taken"))
        assert r.status_code == 409 and "verihub-taken" in r.text
        assert hub.push(variant(arith_bundle, distribution="not-taken")).status_code == 201
        # once hosted, the name is the hub's: pip is never sent upstream for it
        assert hub.client.get("/simple/not-taken/").status_code == 404


def test_serve_passes_the_setting_to_its_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = HubConfig(data=tmp_path, upstream_index="http://127.0.0.1:1/simple")
    for key, value in config.to_env().items():
        monkeypatch.setenv(key, value)
    assert HubConfig.from_env().upstream == "http://127.0.0.1:1/simple/"
    monkeypatch.setenv(
        "VERIHUB_HUB_UPSTREAM_INDEX",
        replace(config, upstream_index="").to_env()["VERIHUB_HUB_UPSTREAM_INDEX"],
    )
    assert HubConfig.from_env().upstream == ""
