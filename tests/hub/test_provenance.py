"""Provenance in config.json: data source, task hash, one leaderboard column per dataset;
seeded --shuffle samples; offline datasets fail fast."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from hub.env.errors import RunDirError, UsageError
from hub.run.evaluate import evaluate, prepare_run, resume
from hub.run.fake_server import FakeChatServer
from hub.run.rundir import RunConfig, RunDir

SHARED = Path(os.environ.get("VERIHUB_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))


def _config(env_id: str, env_args: dict[str, object] | None = None, **kw: object) -> RunConfig:
    defaults: dict[str, object] = dict(
        model="m",
        base_url="http://127.0.0.1:1/v1",
        num_tasks=5,
        rollouts=1,
        max_turns=None,
        seed=0,
        split="test",
        sampling=None,
        env_args=env_args,
        group_advantages=False,
    )
    defaults.update(kw)
    return prepare_run(env_id, **defaults)[2]  # type: ignore[arg-type]


@pytest.fixture
def gsm8k_copy(tmp_path: Path) -> Path:
    src = SHARED / "gsm8k" / "test.jsonl"
    if not src.exists():
        pytest.skip(f"shared data not found at {src}")
    folder = tmp_path / "gsm8k"
    folder.mkdir()
    lines = src.read_text().splitlines()[:40]
    (folder / "test.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_config_records_the_local_copy_and_the_task_hash(gsm8k_copy: Path) -> None:
    config = _config("gsm8k", {"path": str(gsm8k_copy)})
    assert config.location_args == ["path"]
    [source] = config.data
    assert source["source"] == "local" and source["file"] == "test.jsonl"
    assert source["sha256"].startswith("sha256:") and source["n_rows"] == 40
    assert source["rows_sha256"].startswith("sha256:")
    assert str(gsm8k_copy) not in json.dumps(config.data)  # no machine-local path in provenance
    assert config.tasks_sha256 and config.tasks_sha256.startswith("sha256:")
    other = _config("gsm8k", {"path": str(gsm8k_copy)}, num_tasks=6)
    assert other.tasks_sha256 != config.tasks_sha256


@pytest.mark.sandbox
def test_data_loaded_inside_the_sandbox_is_recorded_as_reported_by_it(gsm8k_copy: Path) -> None:
    from hub.run.evaluate import EvalOptions
    from hub.sandbox import unavailable_reason

    why = unavailable_reason()
    if why:
        pytest.skip(f"no sandbox here: {why}")
    outside = _config("gsm8k", {"path": str(gsm8k_copy)})
    inside = _config("gsm8k", {"path": str(gsm8k_copy)}, options=EvalOptions(sandbox=True))
    [source] = inside.data
    assert source["reported_by"] == "sandbox"
    assert source["rows_sha256"] == outside.data[0]["rows_sha256"] and source["n_rows"] == 40
    assert inside.location_args == ["path"]  # the local copy is still a location, not a setting


def test_the_same_data_is_one_leaderboard_column_from_a_variable_or_an_argument(
    gsm8k_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from leaderboard.aggregate import _canonical_args
    from leaderboard.entry import BoardEntry, _data_sha256

    via_arg = _config("gsm8k", {"path": str(gsm8k_copy)})
    moved = tmp_path / "elsewhere"
    shutil.copytree(gsm8k_copy, moved)
    monkeypatch.setenv("VERIHUB_GSM8K_PATH", str(moved))
    via_var = _config("gsm8k", {})
    assert via_var.data[0]["rows_sha256"] == via_arg.data[0]["rows_sha256"]
    assert via_var.tasks_sha256 == via_arg.tasks_sha256

    def column(config: RunConfig) -> str:
        entry = BoardEntry.model_construct(
            env_args=config.env_args, location_args=config.location_args, data_sha256=_data_sha256(config)
        )
        return _canonical_args(entry)

    assert column(via_arg) == column(via_var)
    # other data is another column, even through the same variable
    (moved / "test.jsonl").write_text("\n".join((moved / "test.jsonl").read_text().splitlines()[1:]) + "\n")
    assert column(_config("gsm8k", {})) != column(via_arg)


def test_resume_refuses_when_the_tasks_changed(gsm8k_copy: Path, tmp_path: Path) -> None:
    import asyncio

    async def go() -> None:
        async with FakeChatServer() as server:
            out = tmp_path / "run"
            await evaluate(
                "gsm8k", model="fake", base_url=server.base_url, out=out, num_tasks=3,
                env_args={"path": str(gsm8k_copy)},
            )  # fmt: skip
            rd = RunDir(out)
            rd.rollouts_path.write_bytes(
                b"".join(rd.rollouts_path.read_bytes().splitlines(keepends=True)[:1])
            )
            data = gsm8k_copy / "test.jsonl"
            rows = data.read_text().splitlines()
            rows[1] = rows[1].replace("#### ", "#### 9")
            data.write_text("\n".join(rows) + "\n")
            with pytest.raises(RunDirError, match="not the ones the run started with"):
                await resume(out)

    asyncio.run(go())


def test_offline_hub_download_fails_fast_naming_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    """aime had no variable in this message; every dataset environment names its own."""
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens: the hub is unreachable
    monkeypatch.delenv("VERIHUB_AIME_PATH", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    with pytest.raises(UsageError) as info:
        _config("aime", {})
    text = str(info.value)
    assert "--env-arg path=PATH" in text and "VERIHUB_AIME_PATH=PATH" in text and "unreachable" in text


def test_shuffle_is_a_seeded_sample_and_resumes_to_the_same_tasks(gsm8k_copy: Path) -> None:
    from hub.registry.entrypoints import load_environment

    env = load_environment("gsm8k", path=str(gsm8k_copy))
    first = _config("gsm8k", {"path": str(gsm8k_copy)}, num_tasks=5)
    shuffled = _config("gsm8k", {"path": str(gsm8k_copy)}, num_tasks=5, shuffle=True)
    again = _config("gsm8k", {"path": str(gsm8k_copy)}, num_tasks=5, shuffle=True)
    other_seed = _config("gsm8k", {"path": str(gsm8k_copy)}, num_tasks=5, shuffle=True, seed=1)
    ids = [t.id for t in shuffled.task_selection(env)]
    assert len(ids) == 5 and ids == [t.id for t in again.task_selection(env)]
    assert ids != [t.id for t in first.task_selection(env)]
    assert ids != [t.id for t in other_seed.task_selection(env)]
    order = [t.id for t in env.tasks("test")]
    assert ids == sorted(ids, key=order.index)  # split order, so a resume regenerates them lazily
    assert shuffled.shuffle and shuffled.tasks_sha256 == again.tasks_sha256 != first.tasks_sha256


def test_shuffle_of_an_endless_split_is_refused() -> None:
    with pytest.raises(UsageError, match="drop --shuffle"):
        _config("arith", {}, shuffle=True)
