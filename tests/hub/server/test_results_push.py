"""Pushed results (``verihub results push``, ``eval --push``) against the real hub application.

The run is the submission bundle's ``eval/`` folder: a real evaluation of exactly the wheel the
bundle publishes, so its environment hash is the published version's content hash. Every
refusal also asserts that nothing was stored: no run row and no new blob.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import socket
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serving import serve_http  # noqa: E402
from sqlalchemy import func, select

from hub.client.runpack import RUN_FILES, pack_run
from hub.server.core.models import Run
from leaderboard.verify import verify_run

RESULTS = "/api/v1/results"


def rows(hub: Any) -> int:
    with hub.sessions()() as s:
        return int(s.scalar(select(func.count()).select_from(Run)) or 0)


def blobs(hub: Any) -> int:
    return sum(1 for _ in (hub.config.data / "blobs").glob("??/*"))


def post(hub: Any, archive: Path | bytes, who: str | None = "alice", **query: str) -> Any:
    body = archive if isinstance(archive, bytes) else archive.read_bytes()
    headers = hub.auth(who) if who else {}
    return hub.client.post(RESULTS, content=body, params=query, headers=headers)


def get(hub: Any, path: str, who: str | None = None, **query: str) -> Any:
    return hub.client.get(path, params=query, headers=hub.auth(who) if who else {})


@pytest.fixture
def run_dir(arith_bundle: Any, tmp_path: Path) -> Path:
    """A private copy of the bundle's evaluation run (tests may edit it)."""
    out = tmp_path / "run"
    shutil.copytree(arith_bundle.bundle / "eval", out)
    return out


@pytest.fixture
def published(hub: Any, arith_bundle: Any, packed: Callable[[Path], Path]) -> Any:
    """arith 0.1.0 published as alice/arith."""
    r = hub.push(packed(arith_bundle.bundle))
    assert r.status_code == 201, r.text
    return hub


@pytest.fixture
def pack(tmp_path: Path) -> Callable[[Path], Path]:
    counter = iter(range(1000))

    def make(folder: Path) -> Path:
        return pack_run(folder, tmp_path / f"run{next(counter)}.tar.gz")

    return make


def edit_json(path: Path, **changes: Any) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_push_is_private_by_default_verified_and_recorded_once(
    published: Any, run_dir: Path, pack: Callable[[Path], Path]
) -> None:
    hub = published
    (run_dir / "view.html").write_text("<p>not sent</p>")
    archive = pack(run_dir)
    with tarfile.open(archive) as tf:
        assert sorted(tf.getnames()) == sorted(RUN_FILES)
    r = post(hub, archive, label="  first\nrun  ")
    assert r.status_code == 201, r.text
    run = r.json()
    assert run["created"] is True and run["owner"] == "alice" and run["private"] is True
    assert (run["ref"], run["version"], run["verify_state"]) == ("alice/arith", "0.1.0", "pending")
    assert run["label"] == "first run" and 16 <= len(run["id"]) <= 22
    recomputed = verify_run(run_dir).summary.model_dump(mode="json")
    assert run["summary"] == recomputed and run["mean_reward"] == recomputed["mean_reward"]
    assert run["entry"]["owner"] == "alice" and run["entry"]["model"] == run["model"]
    assert str(hub.config.data) not in run["entry"]["source"]  # no server path leaks
    with hub.sessions()() as s:
        stored = s.scalars(select(Run)).one()
        archive_blob = hub.config.data / "blobs" / stored.archive_sha256[:2] / stored.archive_sha256[2:]
        assert archive_blob.read_bytes() == archive.read_bytes()
    # visible to its pusher (and admins) only
    path = f"{RESULTS}/{run['id']}"
    assert get(hub, path, "alice_read").json()["id"] == run["id"]
    assert get(hub, path, "root").status_code == 200
    listing = "/api/v1/envs/alice/arith/results"
    assert [x["id"] for x in get(hub, listing, "alice_read").json()] == [run["id"]]
    for who in (None, "bob", "bob_read"):
        assert get(hub, path, who).status_code == 404, who
        assert get(hub, listing, who).json() == [], who
    # the same run again: the existing record, not a second one
    n_blobs = blobs(hub)
    again = post(hub, pack(run_dir))
    assert again.status_code == 200 and again.json()["id"] == run["id"] and again.json()["created"] is False
    assert rows(hub) == 1 and blobs(hub) == n_blobs
    # bob pushes the same run publicly: his own record, seen by everyone
    theirs = post(hub, archive, "bob", public="1")
    assert theirs.status_code == 201 and theirs.json()["owner"] == "bob" and theirs.json()["private"] is False
    assert get(hub, f"{RESULTS}/{theirs.json()['id']}").status_code == 200
    assert [x["owner"] for x in get(hub, listing).json()] == ["bob"]
    assert [x["owner"] for x in get(hub, listing, "alice").json()] == ["alice", "bob"]
    assert get(hub, listing, version="0.1.0").json()[0]["owner"] == "bob"
    assert get(hub, listing, version="9.9").status_code == 404


def test_identical_pushes_that_race_give_one_run(
    published: Any, run_dir: Path, pack: Callable[[Path], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both pushes pass every look-up for an existing run (as when they run at the same moment):
    the database's unique index stops the second insert, and the loser answers the winner's run."""
    import hub.server.results.runs as results

    real, calls = results._existing, []

    def racing(*args: Any) -> Any:
        calls.append(args)
        return None if len(calls) <= 4 else real(*args)  # 2 look-ups per push miss; then the truth

    monkeypatch.setattr(results, "_existing", racing)
    first = post(published, pack(run_dir))
    second = post(published, pack(run_dir))
    assert first.status_code == 201 and second.status_code == 200, second.text
    assert second.json()["id"] == first.json()["id"] and second.json()["created"] is False
    assert rows(published) == 1 and len(calls) == 5


def test_token_prices_give_the_run_a_cost_and_bad_prices_are_refused(
    published: Any, run_dir: Path, pack: Callable[[Path], Path]
) -> None:
    for bad in ({"price_in": "3"}, {"price_in": "-1", "price_out": "2"}, {"price_in": "x", "price_out": "2"}):
        r = post(published, pack(run_dir), **bad)
        assert r.status_code == 400 and "price" in r.json()["error"], bad
    assert rows(published) == 0
    r = post(published, pack(run_dir), price_in="3", price_out="15")
    assert r.status_code == 201, r.text
    entry, usage = r.json()["entry"], r.json()["summary"]["usage"]
    expected = (usage["prompt_tokens"] * 3 + usage["completion_tokens"] * 15) / 1e6
    assert entry["cost_usd"] == pytest.approx(expected) and expected > 0
    assert "$3/M prompt" in entry["cost_basis"]


def test_changing_a_run_is_for_its_pusher_or_an_admin(
    published: Any, run_dir: Path, pack: Callable[[Path], Path]
) -> None:
    hub = published
    run_id = post(hub, pack(run_dir)).json()["id"]
    path = f"{RESULTS}/{run_id}"
    headers = hub.auth("bob")
    assert hub.client.post(path, params={"public": "1"}, headers=headers).status_code == 404  # cannot see it
    assert hub.client.post(path, params={"public": "1"}).status_code == 401
    assert hub.client.post(path, params={"public": "1"}, headers=hub.auth("alice_read")).status_code == 403
    assert hub.client.post(path, headers=hub.auth("alice")).status_code == 400
    assert hub.client.post(path, params={"public": "maybe"}, headers=hub.auth("alice")).status_code == 400
    r = hub.client.post(path, params={"public": "1", "label": "mine"}, headers=hub.auth("alice"))
    assert r.status_code == 200 and r.json()["private"] is False and r.json()["label"] == "mine"
    assert r.json()["entry"]["label"] == "mine" and r.json()["verify_report"] is None
    r = hub.client.post(path, params={"label": " long\x00\n" + "y" * 500}, headers=hub.auth("alice"))
    assert r.status_code == 200 and r.json()["label"] == "long " + "y" * 115 and not r.json()["private"]
    assert get(hub, path).status_code == 200
    r = hub.client.post(path, params={"public": "0"}, headers=headers)  # bob sees it now, may not change it
    assert r.status_code == 403 and get(hub, path).status_code == 200
    r = hub.client.post(path, params={"public": "0"}, headers=hub.auth("root"))
    assert r.status_code == 200 and get(hub, path).status_code == 404


def test_the_pusher_is_the_owner_whatever_the_upload_says(
    published: Any, run_dir: Path, pack: Callable[[Path], Path]
) -> None:
    hub = published
    archive = pack(run_dir)
    r = post(hub, archive, owner="bob")
    assert r.status_code == 400 and "account that pushes them" in r.json()["error"]
    assert post(hub, archive, "alice_read").status_code == 403
    assert post(hub, archive, None).status_code == 401
    assert rows(hub) == 0
    edit_json(run_dir / "config.json", owner="bob", pushed_by="bob", user="bob")
    r = post(hub, pack(run_dir))
    assert r.status_code == 201, r.text
    assert r.json()["owner"] == "alice" and r.json()["entry"]["owner"] == "alice"
    with hub.sessions()() as s:
        assert [x.owner.name for x in s.scalars(select(Run))] == ["alice"]


def test_binding_refusals_name_what_is_wrong(
    hub: Any,
    arith_bundle: Any,
    run_dir: Path,
    pack: Callable[[Path], Path],
    packed: Callable[[Path], Path],
    variant: Callable[..., Path],
) -> None:
    archive = pack(run_dir)
    r = post(hub, archive)  # nothing published yet
    assert r.status_code == 404 and "push the environment first" in r.json()["error"]
    assert hub.push(packed(arith_bundle.bundle)).status_code == 201
    n_blobs = blobs(hub)
    # a version the hub does not hold
    other = run_dir.parent / "other-version"
    shutil.copytree(run_dir, other)
    edit_json(other / "config.json", env_version="9.9.9")
    edit_json(other / "summary.json", env_version="9.9.9")
    r = post(hub, pack(other))
    assert r.status_code == 422 and "9.9.9" in r.json()["error"] and "holds: 0.1.0" in r.json()["error"]
    # the version's content differs from what the run was made with
    fake_hash = "sha256:" + "0" * 64
    edit_json(other / "config.json", env_version="0.1.0", env_hash=fake_hash)
    edit_json(other / "summary.json", env_version="0.1.0")
    r = post(hub, pack(other))
    real_hash = hub.client.get("/api/v1/envs/alice/arith/0.1.0").json()["content_hash"]
    assert r.status_code == 422 and fake_hash in r.json()["error"] and real_hash in r.json()["error"]
    # --env naming something that is not there, or not this environment
    assert post(hub, archive, env="alice/nothere").status_code == 404
    assert post(hub, archive, env="not a ref").status_code == 400
    r = post(hub, archive, env="alice/arith@0.2.0")
    assert r.status_code == 400 and "OWNER/ID" in r.json()["error"]
    assert rows(hub) == 0 and blobs(hub) == n_blobs
    # two visible environments with this id: the pusher must choose
    assert hub.push(variant(arith_bundle, distribution="verihub-arith-fork"), "bob").status_code == 201
    r = post(hub, archive)
    assert (
        r.status_code == 409
        and "alice/arith, bob/arith" in r.json()["error"]
        and "--env" in r.json()["error"]
    )
    assert rows(hub) == 0
    r = post(hub, archive, env="bob/arith")
    assert r.status_code == 201 and r.json()["ref"] == "bob/arith" and r.json()["owner"] == "alice"


def test_a_summary_that_does_not_match_the_rollouts_is_refused(
    published: Any, run_dir: Path, pack: Callable[[Path], Path]
) -> None:
    hub = published
    n_blobs = blobs(hub)
    summary = json.loads((run_dir / "summary.json").read_text())
    edit_json(run_dir / "summary.json", mean_reward=1.0 if summary["mean_reward"] != 1.0 else 0.5)
    r = post(hub, pack(run_dir))
    assert r.status_code == 422 and "does not match the rollouts" in r.json()["error"]
    assert "mean_reward" in r.json()["error"]
    # a dropped rollout (summary rebuilt to match): incomplete
    (run_dir / "summary.json").write_text(json.dumps(summary))
    lines = (run_dir / "rollouts.jsonl").read_text().splitlines(keepends=True)
    (run_dir / "rollouts.jsonl").write_text("".join(lines[1:]))
    r = post(hub, pack(run_dir))
    assert r.status_code == 422 and "missing" in r.json()["error"]
    assert rows(hub) == 0 and blobs(hub) == n_blobs


def test_an_oversized_upload_is_refused(published: Any, run_dir: Path, pack: Callable[[Path], Path]) -> None:
    hub = published
    n_blobs = blobs(hub)
    archive = pack(run_dir)
    unpacked = sum((run_dir / name).stat().st_size for name in RUN_FILES)
    files = [(name, None, (run_dir / name).read_bytes()) for name in RUN_FILES]
    # a header that unpacks to more than the cap though every file is small (tar headers count)
    bomb = _tar(files, pax={"comment": "x" * (unpacked + 128 * 1024)})
    Limits = type(hub.config.limits)
    for body, limits, needle in (
        (archive.read_bytes(), Limits(max_upload_bytes=archive.stat().st_size - 1), "cap"),
        (archive.read_bytes(), Limits(max_unpacked_bytes=unpacked - 1), "unpacks to more than"),
        (bomb, Limits(max_unpacked_bytes=unpacked + 64 * 1024), "unpacks to more than"),
    ):
        hub.client.app.state.config = type(hub.config)(data=hub.config.data, limits=limits)
        try:
            r = post(hub, body)
        finally:
            hub.client.app.state.config = hub.config
        assert r.status_code == 413 and needle in r.json()["error"], (limits, r.text)
    # streamed without a Content-Length: cut off at the cap while it is read
    data = archive.read_bytes()
    hub.client.app.state.config = type(hub.config)(data=hub.config.data, limits=Limits(max_upload_bytes=100))
    try:
        chunks = iter([data[i : i + 64] for i in range(0, len(data), 64)])
        r = hub.client.post(RESULTS, content=chunks, headers=hub.auth("alice"))
    finally:
        hub.client.app.state.config = hub.config
    assert r.status_code == 413 and "over the cap of 100 bytes" in r.json()["error"]
    assert rows(hub) == 0 and blobs(hub) == n_blobs
    assert list((hub.config.data / "tmp").iterdir()) == []
    assert post(hub, archive).status_code == 201  # the same archive under the normal caps


def _tar(members: Sequence[tuple[str, bytes | None, bytes]], pax: dict[str, str] | None = None) -> bytes:
    """A gzipped tar of (name, link target or None, data) members (``pax``: a global header)."""
    buf = io.BytesIO()
    fmt = tarfile.PAX_FORMAT if pax else tarfile.DEFAULT_FORMAT
    with tarfile.open(fileobj=buf, mode="w:gz", format=fmt, pax_headers=pax) as tf:
        for name, link, data in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link.decode()
                tf.addfile(info)
            elif name.endswith("/"):
                info.type = tarfile.DIRTYPE
                tf.addfile(info)
            else:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.mark.parametrize(
    ("case", "needle"),
    [
        ("symlink", "symlink"),
        ("dotdot", "outside"),
        ("absolute", "absolute"),
        ("extra", "not part of a run"),
        ("missing", "no summary.json"),
        ("duplicate", "twice"),
        ("folder", "folder"),
        ("nested", "not part of a run"),
        ("not-a-tar", "not a gzipped tar"),
    ],
)
def test_malformed_archives_are_refused(published: Any, run_dir: Path, case: str, needle: str) -> None:
    hub = published
    n_blobs = blobs(hub)
    files = [(name, None, (run_dir / name).read_bytes()) for name in RUN_FILES]
    body: bytes
    if case == "symlink":
        body = _tar([*files[:2], ("summary.json", b"/etc/passwd", b"")])
    elif case == "dotdot":
        body = _tar([*files, ("../x", None, b"x")])
    elif case == "absolute":
        body = _tar([*files, ("/tmp/x", None, b"x")])
    elif case == "extra":
        body = _tar([*files, ("notes.txt", None, b"x")])
    elif case == "missing":
        body = _tar(files[:2])
    elif case == "duplicate":
        body = _tar([*files, files[0]])
    elif case == "folder":
        body = _tar([("run/", None, b""), *files])
    elif case == "nested":
        body = _tar([(f"run/{n}", None, d) for n, _, d in files])
    else:
        body = b"hello"
    r = post(hub, body)
    assert r.status_code == 400, r.text
    assert needle in r.json()["error"], r.json()
    assert rows(hub) == 0 and blobs(hub) == n_blobs
    assert list((hub.config.data / "tmp").iterdir()) == []  # nothing left behind either


def test_runs_of_a_private_environment_stay_invisible(
    hub: Any, arith_bundle: Any, packed: Callable[[Path], Path], run_dir: Path, pack: Callable[[Path], Path]
) -> None:
    assert hub.push(packed(arith_bundle.bundle), owner="lab", private="1").status_code == 201
    r = post(hub, pack(run_dir), public="1")  # alice is in lab: the one arith she sees
    assert r.status_code == 201 and r.json()["ref"] == "lab/arith" and r.json()["private"] is False
    path, listing = f"{RESULTS}/{r.json()['id']}", "/api/v1/envs/lab/arith/results"
    for who in (None, "bob_read"):
        assert get(hub, path, who).status_code == 404
        assert get(hub, listing, who).status_code == 404
    assert post(hub, pack(run_dir), "bob").status_code == 404  # bob cannot push onto it either
    assert post(hub, pack(run_dir), "bob", env="lab/arith").status_code == 404
    assert get(hub, path, "alice_read").status_code == 200
    assert len(get(hub, listing, "alice_read").json()) == 1
    assert rows(hub) == 1


def test_gc_keeps_run_archives(published: Any, run_dir: Path, pack: Callable[[Path], Path]) -> None:
    from hub.server.admin import collect_garbage
    from hub.server.core.storage import LocalStorage

    hub = published
    assert post(hub, pack(run_dir)).status_code == 201
    orphan = LocalStorage(hub.config.data).put_bytes(b"left by a push killed before its commit")
    assert collect_garbage(hub.config) == [orphan]
    with hub.sessions()() as s:
        sha = s.scalars(select(Run.archive_sha256)).one()
    assert LocalStorage(hub.config.data).exists(sha)


def test_local_refusal_before_upload(tmp_path: Path, run_dir: Path) -> None:
    """The client checks the run as the hub would, and says why before sending anything."""
    from hub.client.api import push_results
    from hub.env.errors import UsageError

    nowhere = "http://127.0.0.1:9"  # nothing listens there: a request would fail differently
    with pytest.raises(UsageError, match="not a run directory"):
        push_results(nowhere, tmp_path / "absent", token="vh_x")
    with pytest.raises(UsageError, match="needs a token"):
        push_results(nowhere, run_dir, token=None)
    summary = (run_dir / "summary.json").read_text()
    edit_json(run_dir / "summary.json", n_rollouts=10**6)
    with pytest.raises(UsageError, match="cannot be pushed: summary.json does not match the rollouts"):
        push_results(nowhere, run_dir, token="vh_x")
    (run_dir / "summary.json").write_text(summary)
    (run_dir / "summary.json").unlink()
    with pytest.raises(
        UsageError, match=r"no summary.json \(an unfinished run\? finish it with `verihub eval --resume"
    ):
        push_results(nowhere, run_dir, token="vh_x")


# -- the command line against a live server ---------------------------------------------------


@pytest.fixture
def live_url(published: Any) -> Iterator[str]:
    """The hub of ``published`` served over HTTP on loopback (uvicorn in a thread)."""
    from hub.server.app import create_app

    with serve_http(create_app(published.config)) as url:
        yield url


@pytest.fixture
def fake_model() -> Iterator[str]:
    """A loopback fake model server in its own process (answers "Answer: 42")."""
    port = _free_port()
    cmd = [sys.executable, "-m", "hub.run.fake_server", "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None and "listening" in proc.stdout.readline()
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.kill()
        proc.wait()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``verihub ARGS`` in this process: (exit code, stdout, stderr)."""
    from hub.cli.entry import main

    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def test_cli_push_list_set_and_eval_push(
    published: Any,
    live_url: str,
    fake_model: str,
    run_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hub.client.api import save_login

    hub = published
    monkeypatch.setenv("VERIHUB_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.delenv("VERIHUB_HUB_TOKEN", raising=False)
    never = tmp_path / "never"  # --push without a hub to push to: refused before the run starts
    code, _, err = cli(
        capsys, "eval", "arith", "-m", "m", "--base-url", fake_model, "-o", str(never), "--push"
    )
    assert code == 1 and "no hub given" in err and not never.exists()
    save_login(live_url, hub.tokens["alice"])
    # an unfinished run is refused here, before anything is sent
    summary = (run_dir / "summary.json").read_bytes()
    (run_dir / "summary.json").unlink()
    code, _, err = cli(capsys, "results", "push", str(run_dir))
    assert code == 1 and "cannot be pushed" in err and "--resume" in err
    assert rows(hub) == 0
    (run_dir / "summary.json").write_bytes(summary)
    code, out, err = cli(capsys, "results", "push", str(run_dir), "--label", "smoke [/] run")
    assert code == 0, err
    assert "label 'smoke [/] run'): recorded, under alice, private" in out  # printed as it is
    assert f"{live_url}/alice/arith" in out
    run_id = re.search(r"run (\S+) of alice/arith@0\.1\.0", out)
    assert run_id is not None, out
    code, out, _ = cli(capsys, "results", "push", str(run_dir))
    assert code == 0 and "already on the hub" in out and rows(hub) == 1
    code, out, _ = cli(capsys, "results", "list", "alice/arith", "--json")
    assert code == 0 and [r["id"] for r in json.loads(out)] == [run_id[1]]
    assert json.loads(out)[0]["label"] == "smoke [/] run"
    bob = ("--token", hub.tokens["bob"])
    code, out, _ = cli(capsys, "results", "list", "alice/arith", "--json", *bob)
    assert code == 0 and json.loads(out) == []
    code, _, err = cli(capsys, "results", "set", run_id[1], "--private", *bob)
    assert code == 1 and "404" in err
    code, out, err = cli(capsys, "results", "set", run_id[1], "--public")
    assert code == 0 and "public" in out, err
    code, out, _ = cli(capsys, "results", "list", "alice/arith", "--json", *bob)
    assert code == 0 and [r["id"] for r in json.loads(out)] == [run_id[1]]
    code, out, _ = cli(capsys, "results", "list", "alice/arith", *bob)  # the table
    assert code == 0 and "runs of alice/arith" in out and "public" in out
    code, _, err = cli(capsys, "results", "set", run_id[1], "--private", *bob)
    assert code == 1 and "403" in err
    # eval --push: a second model's run, pushed once it finished
    code, _, err = cli(capsys, "eval", "arith", "-m", "m", "--public", "--base-url", fake_model)
    assert code == 1 and "go with --push" in err
    from hub.registry.entrypoints import package_hash

    published_hash = hub.client.get("/api/v1/envs/alice/arith/0.1.0").json()["content_hash"]
    out_dir = tmp_path / "second"
    args = ["eval", "arith", "-n", "3", "-m", "second-model", "--base-url", fake_model, "--out", str(out_dir)]
    code, out, err = cli(capsys, *args, "--no-progress", "--push", "--public", "--push-env", "alice/arith")
    assert (out_dir / "summary.json").is_file(), err
    if package_hash("arith") != published_hash:  # the installed arith is not the published one
        assert code == 1 and "the run was not pushed" in err and published_hash in err
        assert rows(hub) == 1
        pytest.skip("the installed arith differs from the published wheel: no second run pushed")
    assert code == 0, err
    assert "of alice/arith@0.1.0 (model second-model): recorded, under alice, public" in out
    runs = hub.client.get("/api/v1/envs/alice/arith/results").json()
    assert sorted(r["model"] for r in runs) == sorted([json.loads(summary)["model"], "second-model"])


def test_a_run_id_never_reads_as_a_command_line_option(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run ids go on command lines (`verihub results set ID --private`); one in 64 random ids
    starts with '-', which the command line took for an unknown option."""
    import secrets

    from hub.server.results import runs

    drawn = iter(["-leading-dash-1", "-leading-dash-2", "Xfine-after-two0"])
    monkeypatch.setattr(secrets, "token_urlsafe", lambda nbytes: next(drawn))
    assert runs.new_public_id() == "Xfine-after-two0"
    monkeypatch.undo()
    assert not any(runs.new_public_id().startswith("-") for _ in range(2000))
