"""A bare environment id that more than one owner publishes: the hub's resolve API says so and
lists the owners the requester may see, and ``verihub install ID`` prints them with what to type
next instead of installing either one."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from hub.client.install import AmbiguousIdError, resolve_on_hub

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serving import serve_http  # noqa: E402
from test_names import _env  # noqa: E402

ENV_ID = "bare_twice"  # not in the shipped catalogue


def _resolve(hub: Any, who: str | None = None) -> dict[str, Any]:
    r = hub.client.get(f"/api/v1/resolve/{ENV_ID}", headers=hub.auth(who) if who else {})
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_resolve_lists_the_owners_the_requester_may_see(hub: Any) -> None:
    _env(hub, "alice", ENV_ID, "alice-bare", offered=True)
    one = _resolve(hub)
    assert one == {
        "id": ENV_ID,
        "ambiguous": False,
        "candidates": [{"ref": f"alice/{ENV_ID}", "offered": "1.0"}],
    }
    _env(hub, "lab", ENV_ID, "lab-bare", private=True)  # lab's members (alice) see it; bob does not
    assert _resolve(hub, "bob")["ambiguous"] is False
    assert [c["ref"] for c in _resolve(hub)["candidates"]] == [f"alice/{ENV_ID}"]
    seen = _resolve(hub, "alice")
    assert seen["ambiguous"] is True
    assert seen["candidates"] == [
        {"ref": f"alice/{ENV_ID}", "offered": "1.0"},
        {"ref": f"lab/{ENV_ID}", "offered": None},
    ]
    _env(hub, "bob", ENV_ID, "bob-bare", offered=True)
    assert [c["ref"] for c in _resolve(hub)["candidates"]] == [f"alice/{ENV_ID}", f"bob/{ENV_ID}"]


def test_the_client_lists_the_candidates_and_what_to_type(hub: Any) -> None:
    _env(hub, "alice", ENV_ID, "alice-bare", offered=True)
    with serve_http(hub.client.app) as url:
        assert resolve_on_hub(ENV_ID, hub=url, token=None) == f"alice/{ENV_ID}"
        _env(hub, "bob", ENV_ID, "bob-bare")
        with pytest.raises(AmbiguousIdError) as err:
            resolve_on_hub(ENV_ID, hub=url, token=None)
    text = str(err.value)
    assert (
        f"alice/{ENV_ID}  (newest reviewed: 1.0)" in text and f"bob/{ENV_ID}  (no reviewed version)" in text
    )
    assert f"verihub install alice/{ENV_ID} --hub {url}" in text


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    from hub.cli.entry import main

    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return int(done.value.code or 0), out.out + out.err


def test_install_of_an_ambiguous_bare_id_names_the_owners(
    hub: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hub.registry.install as registry_install

    def no_install(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("an ambiguous id must not be installed")

    monkeypatch.setattr(registry_install, "install", no_install)
    monkeypatch.setattr("hub.cli.hubcmds.install", no_install)
    monkeypatch.setattr("hub.client.install.install", no_install)
    _env(hub, "alice", ENV_ID, "alice-bare", offered=True)
    _env(hub, "bob", ENV_ID, "bob-bare", offered=True)
    with serve_http(hub.client.app) as url:
        code, out = _cli(capsys, "install", ENV_ID, "--hub", url)  # a named hub
        assert code != 0 and f"alice/{ENV_ID}" in out and f"bob/{ENV_ID}" in out, out
        assert "verihub install alice/" in out
        config = tmp_path / "config.toml"
        config.write_text(f'[hub]\nurl = "{url}"\n', encoding="utf-8")
        monkeypatch.setenv("VERIHUB_CONFIG", str(config))
        code, out = _cli(capsys, "install", ENV_ID)  # the hub of `verihub login`, no catalogue has it
        assert code != 0 and f"alice/{ENV_ID}" in out and f"bob/{ENV_ID}" in out, out
