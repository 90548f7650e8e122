"""tests/hub/vf_venvs.py: the verifiers 0.3 and 0.4 test venvs never share a folder, and a venv is
made again offline (``--no-index``, from its cached wheels) once the wheels are there.

pip is not run: the commands venv_for would run are recorded."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.hub import vf_venvs


@pytest.fixture
def commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    ran: list[list[str]] = []

    def fake_run(cmd: Sequence[str], timeout: float) -> None:
        ran.append(list(cmd))
        if "venv" in cmd:
            Path(cmd[-1]).mkdir(parents=True, exist_ok=True)
        if "wheel" in cmd:
            Path(cmd[cmd.index("-w") + 1]).mkdir(parents=True)

    monkeypatch.setenv("VERIHUB_TEST_VENVS", str(tmp_path))
    monkeypatch.setattr(vf_venvs, "_run", fake_run)
    return ran


def test_the_two_releases_get_their_own_venvs_and_wheels(commands: list[list[str]]) -> None:
    v03, v04 = vf_venvs.venv_for("vf03"), vf_venvs.venv_for("vf04")
    assert v03 != v04 and v03.name.startswith("vf03-") and v04.name.startswith("vf04-")
    wheel_dirs = {c[c.index("-w") + 1] for c in commands if "wheel" in c}
    assert len(wheel_dirs) == 2
    installs = [c for c in commands if "install" in c and "-e" not in c]
    assert [next(r for r in c if r.startswith("verifiers==")) for c in installs] == [
        "verifiers==0.3.1",
        "verifiers==0.4.0",
    ]
    assert all("--no-index" in c for c in commands if "install" in c)  # installs never reach PyPI


def test_a_venv_is_reused_and_remade_offline_from_its_wheels(commands: list[list[str]]) -> None:
    venv = vf_venvs.venv_for("vf03")
    assert sum("wheel" in c for c in commands) == 1
    commands.clear()
    assert vf_venvs.venv_for("vf03") == venv
    assert all("-e" in c for c in commands) and len(commands) == 1  # only this checkout, refreshed
    (venv / ".complete").unlink()
    commands.clear()
    vf_venvs.venv_for("vf03")
    assert not any("wheel" in c for c in commands)  # the cached wheels, not PyPI
    assert any("--no-index" in c and "verifiers==0.3.1" in c for c in commands)


def test_the_checkout_is_part_of_the_venv_key(
    commands: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    reqs = vf_venvs.requirements("vf04")
    here = vf_venvs.venv_for("vf04", reqs)
    monkeypatch.setattr(vf_venvs, "REPO", Path("/elsewhere/verihub"))
    there = vf_venvs.venv_for("vf04", reqs)
    assert here != there and here.name.split("-")[1] == there.name.split("-")[1]  # same wheels key
    assert sum("wheel" in c for c in commands) == 1
