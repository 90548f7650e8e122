"""The hub application through HTTP (Starlette's test client) on SQLite: push, review, index,
visibility of private environments, and every refusal with its status code.

Refusals also assert that nothing was stored (no version row).
"""

from __future__ import annotations

import base64
import datetime as dt
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, update

from hub.client.api import pack_bundle
from hub.server.core.models import Token, Version

JSON_V1 = "application/vnd.pypi.simple.v1+json"


def versions(hub: Any) -> int:
    with hub.sessions()() as s:
        return int(s.scalar(select(func.count()).select_from(Version)) or 0)


def test_push_review_and_index(hub: Any, arith_bundle: Any, packed: Callable[[Path], Path]) -> None:
    archive = packed(arith_bundle.bundle)
    r = hub.push(archive)
    assert r.status_code == 201, r.text
    assert r.json()["ref"] == "alice/arith" and r.json()["created"] is True
    again = hub.push(archive)
    assert again.status_code == 200 and "already published" in again.json()["message"]
    assert versions(hub) == 1
    info = hub.client.get("/api/v1/envs/alice/arith").json()
    assert info["versions"][0]["state"] == "queued" and info["offered"] == []
    # not reviewed yet: the reviewed index does not offer it, the unreviewed one does
    assert hub.client.get("/simple/verihub-arith/").status_code == 404
    assert hub.client.get("/simple-unreviewed/verihub-arith/").status_code == 200
    assert hub.review() == 1
    detail = hub.client.get("/api/v1/envs/alice/arith/0.1.0").json()
    assert detail["state"] == "passed", detail["report"]
    assert "PASSED" in detail["report"]["check_text"] and detail["report"]["problems"] == []
    page = hub.client.get("/simple/verihub-arith/", headers={"Accept": JSON_V1})
    assert page.headers["content-type"].startswith(JSON_V1)
    data = page.json()
    assert data["meta"]["api-version"] == "1.1" and data["versions"] == ["0.1.0"]
    kinds = {f["filename"].rsplit(".", 1)[-1] for f in data["files"]}
    assert kinds == {"whl"}  # sdists are never offered to installers
    for f in data["files"]:
        assert f["requires-python"] == ">=3.10" and f["upload-time"].endswith("Z") and f["yanked"] is False
        body = hub.client.get(f["url"]).content
        import hashlib

        assert hashlib.sha256(body).hexdigest() == f["hashes"]["sha256"]
    wheel = next(f for f in data["files"] if f["filename"].endswith(".whl"))
    meta = hub.client.get(wheel["url"] + ".metadata")
    assert meta.status_code == 200 and b"Name: verihub-arith" in meta.content
    assert hashlib.sha256(meta.content).hexdigest() == wheel["core-metadata"]["sha256"]
    assert "dist-info-metadata" not in wheel  # pip 23.0 crashes on its JSON hash mapping
    html = hub.client.get("/simple/verihub-arith/").text
    assert 'data-core-metadata="sha256=' in html and 'data-dist-info-metadata="sha256=' in html
    assert 'data-requires-python="&gt;=3.10"' in html and "#sha256=" in html
    assert hub.client.get("/simple/Verihub_Arith/", follow_redirects=False).headers["location"] == (
        "/simple/verihub-arith/"
    )
    root = hub.client.get("/simple/", headers={"Accept": JSON_V1}).json()
    assert root["projects"] == [{"name": "verihub-arith"}]
    cat = hub.client.get("/api/v1/catalogue.json").json()
    import json

    from hub.registry.catalogue import parse_catalogue

    parsed = parse_catalogue(json.dumps(cat), origin="hub")
    assert parsed.get("arith") is not None and parsed.get("arith").content_hash == detail["content_hash"]
    # yank: still listed (PEP 592) but marked
    bad = hub.client.post(
        "/api/v1/envs/alice/arith/0.1.0/yank", params={"reason": "x"}, headers=hub.auth("bob")
    )
    assert bad.status_code == 403
    ok = hub.client.post(
        "/api/v1/envs/alice/arith/0.1.0/yank", params={"reason": "broken grader"}, headers=hub.auth("alice")
    )
    assert ok.status_code == 200
    files = hub.client.get("/simple/verihub-arith/", headers={"Accept": JSON_V1}).json()["files"]
    assert all(f["yanked"] == "broken grader" for f in files)
    assert 'data-yanked="broken grader"' in hub.client.get("/simple/verihub-arith/").text


def test_refusals(
    hub: Any, arith_bundle: Any, packed: Callable[[Path], Path], variant: Callable[..., Path], tmp_path: Path
) -> None:
    archive = packed(arith_bundle.bundle)
    # another owner's namespace, an organisation one is not in, a read-only token
    assert hub.push(archive, "bob", owner="alice").status_code == 403
    assert hub.push(archive, "bob", owner="lab").status_code == 403
    assert hub.push(archive, "alice_read").status_code == 403
    # tampered bundle: a file changed after the manifest was written
    tampered = tmp_path / "tampered"
    shutil.copytree(arith_bundle.bundle, tampered)
    (tampered / "check" / "report.txt").write_text("all good, trust me\n")
    r = hub.push(pack_bundle(tampered, tmp_path / "t.tar.gz"))
    assert r.status_code == 422 and "modified" in r.json()["error"]
    # malformed manifest
    (tampered / "manifest.json").write_text('{"bundle_version": "lots"}')
    r = hub.push(pack_bundle(tampered, tmp_path / "m.tar.gz"))
    assert r.status_code == 422 and "malformed" in r.json()["error"]
    # not an archive, and an oversized body
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"hello")
    r = hub.push(junk)
    assert r.status_code == 400 and "not a gzipped tar" in r.json()["error"]
    big = tmp_path / "big.bin"
    big.write_bytes(b"\0" * 1024)
    hub.client.app.state.config = type(hub.config)(
        data=hub.config.data, limits=type(hub.config.limits)(max_upload_bytes=512)
    )
    r = hub.push(big)
    assert r.status_code == 413
    hub.client.app.state.config = hub.config
    assert versions(hub) == 0
    # the same version with different content
    assert hub.push(archive).status_code == 201
    other = variant(arith_bundle, summary="Another summary")
    r = hub.push(other)
    assert r.status_code == 409 and "different content" in r.json()["error"]
    # a name colliding after normalisation, pushed by someone else
    clash = variant(arith_bundle, distribution="Verihub_Arith", version="0.2.0")
    r = hub.push(clash, "bob")
    assert r.status_code == 409 and "already taken" in r.json()["error"]
    assert versions(hub) == 1


def test_look_alike_names_are_flagged(
    hub: Any, arith_bundle: Any, packed: Callable[[Path], Path], variant: Callable[..., Path]
) -> None:
    assert hub.push(packed(arith_bundle.bundle)).status_code == 201
    r = hub.push(variant(arith_bundle, distribution="verihub-arlth"), "bob")
    assert r.status_code == 201 and "alice/arith" in r.json()["flagged"]
    hub.review()
    info = hub.client.get("/api/v1/envs/bob/arith").json()
    assert info["versions"][0]["state"] == "passed" and info["offered"] == []  # held for a person
    assert hub.client.get("/simple/verihub-arlth/").status_code == 404
    from hub.server.admin import approve, open_hub

    with open_hub(hub.config) as s:
        approve(s, "bob/arith")
    assert hub.client.get("/simple/verihub-arlth/").status_code == 200


def test_tokens_wrong_expired_revoked_and_rate_limited(
    hub: Any, arith_bundle: Any, packed: Callable[[Path], Path]
) -> None:
    archive = packed(arith_bundle.bundle)
    good = hub.tokens["alice"]
    wrong = good[:-4] + ("aaaa" if not good.endswith("aaaa") else "bbbb")
    for headers in (
        {},
        {"Authorization": f"Bearer {wrong}"},
        {"Authorization": "Bearer nonsense"},
        {"Authorization": f"Token {good}"},
    ):
        r = hub.client.post("/api/v1/push", content=archive.read_bytes(), headers=headers)
        assert r.status_code == 401, headers
    # a cross-site form, even with basic credentials a browser may have cached: refused
    basic = base64.b64encode(f"__token__:{good}".encode()).decode()
    r = hub.client.post("/api/v1/push", data={"x": "1"}, headers={"Authorization": f"Basic {basic}"})
    assert r.status_code == 401 and "Bearer" in r.json()["error"]
    r = hub.client.post(
        "/api/v1/envs/alice/arith/0.1.0/yank?reason=x", headers={"Authorization": f"Basic {basic}"}
    )
    assert r.status_code == 401
    with hub.sessions()() as s, s.begin():
        s.execute(
            update(Token)
            .where(Token.id == hub.tokens["bob"][3:15])
            .values(expires_at=dt.datetime(2000, 1, 1))
        )
    assert hub.push(archive, "bob").status_code == 401
    from hub.server.accounts.users import revoke_token
    from hub.server.admin import open_hub

    with open_hub(hub.config) as s:
        revoke_token(s, hub.tokens["alice_read"])
    assert hub.client.get("/api/v1/whoami", headers=hub.auth("alice_read")).status_code == 401
    assert hub.client.get("/api/v1/whoami", headers=hub.auth("alice")).json()["name"] == "alice"
    # by now this client failed 7 times; three more and it is refused even with a good token
    for _ in range(3):
        hub.client.get("/api/v1/whoami", headers={"Authorization": f"Bearer {wrong}"})
    r = hub.client.get("/api/v1/whoami", headers=hub.auth("alice"))
    assert r.status_code == 429
    assert versions(hub) == 0


def test_private_environments_are_invisible(
    hub: Any, arith_bundle: Any, packed: Callable[[Path], Path]
) -> None:
    r = hub.push(packed(arith_bundle.bundle), owner="lab", private="1")
    assert r.status_code == 201, r.text
    hub.review()
    files = hub.client.get(
        "/simple-unreviewed/verihub-arith/", headers={"Accept": JSON_V1, **hub.auth("alice_read")}
    )
    assert files.status_code == 200
    for other in ({}, hub.auth("bob_read")):  # the same page (and cache key) for others: not found
        seen = hub.client.get("/simple-unreviewed/verihub-arith/", headers={"Accept": JSON_V1, **other})
        assert seen.status_code == 404
    url = files.json()["files"][0]["url"]
    basic = {
        "Authorization": "Basic " + base64.b64encode(f"alice:{hub.tokens['alice_read']}".encode()).decode()
    }
    paths = [
        "/simple/verihub-arith/",
        "/api/v1/envs/lab/arith",
        "/api/v1/envs/lab/arith/0.1.0",
        url,
        url + ".metadata" if url.endswith(".whl") else url,
    ]
    for who in (None, "bob_read"):
        headers = hub.auth(who) if who else {}
        for path in paths:
            assert hub.client.get(path, headers=headers).status_code == 404, (who, path)
        assert hub.client.get("/api/v1/search", params={"q": "arith"}, headers=headers).json() == []
        assert hub.client.get("/simple/", headers={"Accept": JSON_V1, **headers}).json()["projects"] == []
        assert hub.client.get("/api/v1/catalogue.json", headers=headers).json()["environments"] == []
    for path in paths:  # the member of the owning organisation sees it (pip sends basic auth)
        assert hub.client.get(path, headers=basic).status_code == 200, path
    assert [e["ref"] for e in hub.client.get("/api/v1/search", headers=basic).json()] == ["lab/arith"]


def test_concurrent_pushes_of_one_version(hub: Any, arith_bundle: Any, variant: Callable[..., Path]) -> None:
    a = variant(arith_bundle, summary="First of two")
    b = variant(arith_bundle, summary="Second of two")
    results: list[int] = []
    barrier = threading.Barrier(2)

    def go(archive: Path) -> None:
        barrier.wait()
        results.append(hub.push(archive).status_code)

    threads = [threading.Thread(target=go, args=(x,)) for x in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [201, 409]
    assert versions(hub) == 1


def test_publish_bundled(hub: Any, arith_bundle: Any) -> None:
    """`verihub hub publish-bundled`: the shipped arith, built as `submit` builds it, under verihub."""
    from hub.review.check import CheckOptions
    from hub.server.packages.bundled import publish_bundled

    fast = CheckOptions(num_tasks=10, gold_tasks=8, probe_tasks=2, grade_timeout_s=2.0)
    said: list[str] = []
    done = publish_bundled(
        hub.config,
        "verihub",
        only=["arith"],
        submit_options={"max_tokens": 16, "check_options": fast},
        progress=said.append,
    )
    assert [(d.ref, d.created) for d in done] == [("verihub/arith", True)]
    assert any("building arith" in s for s in said)
    assert hub.review() == 1
    info = hub.client.get("/api/v1/envs/verihub/arith").json()
    assert info["offered"] == ["0.1.0"] and info["owner"] == "verihub"


def test_gc_removes_only_unreferenced_blobs(
    hub: Any, arith_bundle: Any, packed: Callable[[Path], Path]
) -> None:
    from hub.server.admin import collect_garbage
    from hub.server.core.storage import LocalStorage

    assert hub.push(packed(arith_bundle.bundle)).status_code == 201
    store = LocalStorage(hub.config.data)
    orphan = store.put_bytes(b"left by a push killed before its commit")
    assert collect_garbage(hub.config) == [orphan]
    info = hub.client.get("/api/v1/envs/alice/arith").json()
    for f in info["versions"][0]["files"]:
        assert hub.client.get(f["url"]).status_code == 200
