"""verihub init: each kind passes its own check; round trip init -> check -> install -> list -> eval."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import hub.cli
from hub.cli import authoring, hubcmds  # noqa: F401  (register the commands)
from hub.env.errors import UsageError
from hub.registry.entrypoints import installed, list_environments
from hub.review.check import CheckOptions, check
from hub.review.scaffold import scaffold
from hub.run.evaluate import evaluate
from hub.run.fake_server import FakeChatServer

FAST = CheckOptions(num_tasks=10, gold_tasks=10, probe_tasks=2, grade_timeout_s=2.0)


@pytest.mark.parametrize("kind", ["multi-turn", "tools"])
@pytest.mark.sandbox
def test_scaffold_kind_passes_its_own_check(kind: str, tmp_path: Path) -> None:
    root = scaffold(f"scaf_{kind.replace('-', '_')}", kind=kind, dest=tmp_path / "env")  # type: ignore[arg-type]
    assert (root / "README.md").read_text().count("**") >= 10
    report = check(str(root), options=FAST)
    assert report.passed, report.to_text()


def test_init_refuses_bad_names_and_non_empty_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(UsageError, match="not a valid environment id"):
        scaffold("Bad-Name", dest=tmp_path / "x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "file").write_text("x")
    with pytest.raises(SystemExit) as exc:
        hub.cli.main(["init", "ok_name", "--path", str(tmp_path / "full")])
    assert exc.value.code == 1 and "--force" in capsys.readouterr().err


ENV_ID = "hubtest_scaffold_rt"


def _answer(request: dict[str, Any]) -> str:
    from verihub_hubtest_scaffold_rt import QUESTIONS  # type: ignore[import-not-found,unused-ignore]

    text = request["messages"][-1]["content"]
    return next((f"Answer: {a}" for q, a in QUESTIONS if q in text), "Answer: ?")


@pytest.mark.sandbox
async def test_round_trip_init_check_install_list_eval(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        hub.cli.main(["init", ENV_ID, "--path", str(tmp_path / "env"), "--kind", "single-turn"])
    assert exc.value.code == 0
    root = tmp_path / "env"
    report = check(str(root), options=FAST)
    assert report.passed, report.to_text()
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
    subprocess.run([*pip, str(root)], check=True, capture_output=True)
    importlib.invalidate_caches()
    try:
        assert ENV_ID in installed()
        assert any(e.id == ENV_ID and e.installed for e in list_environments())
        async with FakeChatServer(responder=_answer) as server:
            summary = await evaluate(
                ENV_ID, model="fake", base_url=server.base_url, out=tmp_path / "run", num_tasks=5, rollouts=2
            )
        assert summary.n_rollouts == 10 and summary.n_errors == 0 and summary.mean_reward == 1.0
    finally:
        subprocess.run(
            [sys.executable, "-m", "pip", "uninstall", "-y", "-q", f"verihub-{ENV_ID.replace('_', '-')}"],
            capture_output=True,
            check=False,
        )
    assert ENV_ID not in installed()
