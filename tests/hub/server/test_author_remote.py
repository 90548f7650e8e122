"""An author's loop against a hub over HTTP, with nothing but its URL and a token: ``push`` shows
its steps and the page, ``status [--wait]``, ``yank``, ``visibility``; ``push --private`` cannot
turn a public environment private; a yanked version installs only when pinned, saying why."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serving import serve_http  # noqa: E402

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from hub.cli.entry import main

    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return int(done.value.code or 0), out.out, out.err


@pytest.fixture
def served(hub: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[Any, str]]:
    monkeypatch.setenv("VERIHUB_CONFIG", str(tmp_path / "config.toml"))  # no stored login
    monkeypatch.delenv("VERIHUB_HUB_TOKEN", raising=False)
    with serve_http(hub.client.app) as url:
        yield hub, url


def test_push_status_yank_visibility(
    served: tuple[Any, str], arith_bundle: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    hub, url = served

    def as_(who: str, *args: str) -> tuple[int, str, str]:
        return cli(capsys, *args, "--hub", url, "--token", hub.tokens[who])

    code, out, _ = as_("alice", "push", str(arith_bundle.bundle))
    assert code == 0, out
    assert "uploading" in out and "bytes" in out  # the steps are shown
    assert f"page: {url}/alice/arith" in out and "verihub status alice/arith@0.1.0 --wait" in out

    code, out, _ = as_("alice", "status", "alice/arith")
    assert code == 0 and "alice/arith@0.1.0: review queued" in out
    assert hub.review() == 1
    code, out, _ = as_("alice", "status", "alice/arith@0.1.0", "--wait")
    assert code == 0 and "review passed" in out

    # a push cannot make a public environment private; `verihub visibility` does
    code, _, err = as_("alice", "push", str(arith_bundle.bundle), "--private")
    assert code != 0 and "verihub visibility alice/arith --private" in err
    code, _, err = as_("bob", "visibility", "alice/arith", "--private")
    assert code != 0 and "403" in err
    code, out, _ = as_("alice", "visibility", "alice/arith", "--private")
    assert code == 0 and "alice/arith is private now" in out
    assert hub.client.get("/api/v1/envs/alice/arith").status_code == 404  # anonymous
    assert hub.client.get("/api/v1/envs/alice/arith", headers=hub.auth("bob")).status_code == 404
    code, out, _ = as_("alice", "visibility", "alice/arith", "--public")
    assert code == 0 and hub.client.get("/api/v1/envs/alice/arith").status_code == 200

    code, _, err = as_("bob", "yank", "alice/arith@0.1.0", "--reason", "mine now")
    assert code != 0 and "403" in err
    code, _, err = as_("alice", "yank", "alice/arith", "--reason", "x")
    assert code != 0 and "OWNER/ID@VERSION" in err
    code, out, _ = as_("alice", "yank", "alice/arith@0.1.0", "--reason", "grader bug")
    assert code == 0 and "yanked: grader bug" in out
    code, out, _ = as_("alice", "status", "alice/arith@0.1.0")
    assert "yanked: grader bug" in out


def test_a_yanked_version_installs_only_when_pinned() -> None:
    from hub.client.install import pick_version
    from hub.env.errors import UsageError

    info = {
        "ref": "alice/arith",
        "versions": [
            {"version": "0.1.0", "yanked": False, "state": "passed", "yank_reason": None},
            {"version": "0.2.0", "yanked": True, "state": "passed", "yank_reason": "grader bug"},
        ],
        "offered": ["0.1.0", "0.2.0"],
    }
    assert pick_version(info, None, allow_unreviewed=False)["version"] == "0.1.0"
    assert pick_version(info, "0.2.0", allow_unreviewed=False)["version"] == "0.2.0"
    info["versions"][0]["yanked"] = True
    with pytest.raises(UsageError):
        pick_version(info, None, allow_unreviewed=False)
