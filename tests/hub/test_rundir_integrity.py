"""Run-directory integrity: read-only readers, one writer, full disks, regrade history."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graders.exact import ExactGrader
from hub import SingleTurnEnv
from hub.env.errors import RunDirError
from hub.env.types import Message, Rollout, Timing
from hub.run.client import ClientOptions, OpenAIClient
from hub.run.fake_server import FakeChatServer
from hub.run.rundir import RunConfig, RunDir
from hub.run.runlock import holder_of
from hub.run.runner import Runner
from tests.conftest import correct_responder, make_tasks

ROOT = Path(__file__).resolve().parents[2]


def _rollout(i: int, text: str = "Answer: 1") -> Rollout:
    return Rollout(
        task_id=f"t{i}",
        rollout_index=0,
        messages=[Message(role="user", content="q"), Message(role="assistant", content=text)],
        reward=1.0,
        passed=True,
        timing=Timing(started_at=float(i)),
    )


def _keys(rd: RunDir) -> Counter[tuple[str, int]]:
    return Counter((r.task_id, r.rollout_index) for r in rd.iter_rollouts())


async def _run(env: SingleTurnEnv, server: FakeChatServer, config: RunConfig, rd: RunDir, **kw: Any) -> Any:
    opts = ClientOptions(base_url=server.base_url, model="fake", backoff_base_s=0.01, backoff_max_s=0.02)
    async with OpenAIClient(opts) as client:
        runner = Runner(env=env, client=client, config=config, rundir=rd, concurrency=4, **kw)
        return await runner.run(list(env.tasks("test")))


def _child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "hub", *args]
    return subprocess.run(cmd, env=_child_env(), capture_output=True, text=True, timeout=120)


# -- 1. readers never write -----------------------------------------------------------------------
def test_show_during_a_write_leaves_the_record_being_written(
    config_factory: Callable[..., RunConfig], tmp_path: Path
) -> None:
    """A writer is half-way through a 3 MB record: `show` must neither cut it nor count it.

    Before the fix `show` ran the torn-tail repair, which truncated the line being appended (the
    writer's next bytes then fused into a corrupt record); remove the lock check and the
    read-only iteration from show_cmd and this fails on the byte count."""
    rd = RunDir(tmp_path)
    rd.create(config_factory())
    with rd.open_writer() as w:  # holds the writer lock, as a running eval does
        w.write(_rollout(0))
        line = json.dumps(_rollout(1, "x" * 3_000_000).model_dump(mode="json")).encode() + b"\n"
        with rd.rollouts_path.open("ab") as fh:
            fh.write(line[: len(line) // 2])  # the writer is mid-append
        size = rd.rollouts_path.stat().st_size
        result = _cli("show", str(tmp_path))
        assert result.returncode == 0, result.stderr
        assert "being written by write (pid" in result.stderr
        assert "rollouts recorded" in result.stdout
        assert rd.rollouts_path.stat().st_size == size  # nothing was cut
        with rd.rollouts_path.open("ab") as fh:
            fh.write(line[len(line) // 2 :])  # the writer finishes
    assert _keys(rd) == Counter({("t0", 0): 1, ("t1", 0): 1})
    assert [r.completion for r in rd.iter_rollouts()][1] == "x" * 3_000_000


def test_show_while_a_process_appends_big_records_loses_nothing(
    config_factory: Callable[..., RunConfig], tmp_path: Path
) -> None:
    """A real writer process appends 30 records of 1 MB while `show` runs in a loop."""
    rd = RunDir(tmp_path)
    rd.create(config_factory())
    script = textwrap.dedent(
        f"""
        from hub.run.rundir import RunDir
        from hub.env.types import Message, Rollout, Timing
        rd = RunDir({str(tmp_path)!r})
        with rd.open_writer() as w:
            for i in range(30):
                w.write(Rollout(task_id=f"t{{i}}", rollout_index=0, timing=Timing(started_at=0.0),
                    messages=[Message(role="assistant", content=str(i) * 1_000_000)]))
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], env=_child_env())
    shows = 0
    while proc.poll() is None:
        result = _cli("show", str(tmp_path), "--recompute")
        assert result.returncode == 0, result.stderr
        shows += 1
    assert proc.returncode == 0
    assert shows >= 1
    assert _keys(rd) == Counter({(f"t{i}", 0): 1 for i in range(30)})


# -- 2. one writer per run directory -------------------------------------------------------------
async def test_a_second_writer_is_refused_naming_the_holder(
    config_factory: Callable[..., RunConfig], tmp_path: Path
) -> None:
    env = SingleTurnEnv(id="toy", version="1.0.0", tasks=make_tasks(6), grader=ExactGrader())
    config = config_factory(rollouts=4)
    RunDir(tmp_path).create(config)
    async with FakeChatServer(responder=correct_responder, schedule=("slow",), slow_s=0.05) as server:
        first = asyncio.ensure_future(_run(env, server, config, RunDir(tmp_path)))
        while holder_of(tmp_path) is None:
            await asyncio.sleep(0.01)
        with pytest.raises(RunDirError, match=rf"in use by eval \(pid {os.getpid()} on .+, since "):
            await _run(env, server, config, RunDir(tmp_path))
        with pytest.raises(RunDirError, match="in use by eval"):
            from hub.run.evaluate import regrade

            await regrade(tmp_path)
        await first
    assert _keys(RunDir(tmp_path)) == Counter({(f"t{i}", j): 1 for i in range(6) for j in range(4)})
    assert holder_of(tmp_path) is None  # released


@pytest.mark.slow
def test_two_resumes_at_once_one_wins_and_the_file_stays_exact(
    config_factory: Callable[..., RunConfig], tmp_path: Path
) -> None:
    """Two `verihub eval --resume DIR` processes: one runs, the other exits 1 naming it."""
    script = textwrap.dedent(
        """
        import asyncio, sys
        from hub.run.fake_server import FakeChatServer
        async def main():
            async with FakeChatServer(schedule=("slow",), slow_s=0.25, port=int(sys.argv[1])) as s:
                await asyncio.sleep(60)
        asyncio.run(main())
        """
    )
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    server = subprocess.Popen([sys.executable, "-c", script, str(port)], env=_child_env())
    try:
        out = tmp_path / "run"
        cmd = [sys.executable, "-m", "hub", "eval", "arith", "--model", "fake", "--no-progress"]
        cmd += ["--base-url", f"http://127.0.0.1:{port}/v1", "-n", "30", "-r", "2", "--out", str(out)]
        deadline = time.time() + 20
        first = None
        while time.time() < deadline:
            first = subprocess.run(cmd + ["--max-tokens", "8"], env=_child_env(), capture_output=True)
            if first.returncode == 0 or b"cannot reach" not in first.stderr:
                break
            time.sleep(0.2)
        assert first is not None
        assert first.returncode == 0, first.stderr.decode()
        rd = RunDir(out)
        # drop half the rollouts, then resume twice at once
        lines = rd.rollouts_path.read_bytes().splitlines(keepends=True)
        rd.rollouts_path.write_bytes(b"".join(lines[:10]))
        resume = [sys.executable, "-m", "hub", "eval", "--resume", str(out), "--no-progress", "-c", "4"]
        procs = [subprocess.Popen(resume, env=_child_env(), stderr=subprocess.PIPE) for _ in range(2)]
        results = [(p.wait(timeout=120), p.stderr.read().decode() if p.stderr else "") for p in procs]
        codes = sorted(rc for rc, _ in results)
        assert codes == [0, 1], results
        loser = next(text for rc, text in results if rc == 1)
        assert "is in use by eval --resume (pid " in loser
        assert _keys(rd) == Counter({k: 1 for k in _keys(rd)}) and sum(_keys(rd).values()) == 60
    finally:
        server.kill()
        server.wait()


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys, time
        from hub.run.rundir import RunDir
        with RunDir({str(tmp_path)!r}).writing("eval"):
            print("locked", flush=True)
            time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], env=_child_env(), stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"locked"
    holder = holder_of(tmp_path)
    assert holder is not None and holder.pid == proc.pid and holder.purpose == "eval"
    with pytest.raises(RunDirError, match=f"pid {proc.pid}"):
        with RunDir(tmp_path).writing("regrade"):
            pass
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert (tmp_path / ".lock").read_bytes()  # its record is still there: a stale lock
    assert holder_of(tmp_path) is None  # but nobody holds it
    rd = RunDir(tmp_path)
    with rd.writing("regrade"):
        holder = holder_of(tmp_path)
        assert holder is not None and holder.pid == os.getpid() and holder.purpose == "regrade"


# -- 3. short writes and full disks --------------------------------------------------------------
_FULL_DISK = """
import asyncio, json, os, sys
from pathlib import Path
from graders.exact import ExactGrader
from hub import SingleTurnEnv, Task
from hub.run.client import ClientOptions, OpenAIClient
from hub.env.errors import RunDirError
from hub.run.fake_server import FakeChatServer
from hub.run.rundir import RunDir
from hub.run.runner import Runner
from tests.conftest import make_config

mnt = Path(sys.argv[1])
tasks = [Task(id=f"t{i}", prompt=f"{i} " + "p" * 20000, answer="1") for i in range(12)]
env = SingleTurnEnv(id="toy", version="1.0.0", tasks=tasks, grader=ExactGrader())
config = make_config(num_tasks=12, rollouts=1)
filler = mnt / "filler"
filler.write_bytes(b"f" * 60000)
rd = RunDir(mnt / "run")
rd.create(config)

async def run():
    async with FakeChatServer(responder=lambda r: "Answer: 1") as server:
        opts = ClientOptions(base_url=server.base_url, model="fake")
        async with OpenAIClient(opts) as client:
            return await Runner(env=env, client=client, config=config, rundir=rd, concurrency=2).run(tasks)

out = {}
try:
    asyncio.run(run())
    out["first"] = "finished"
except RunDirError as exc:
    out["first"] = str(exc)
data = rd.rollouts_path.read_bytes()
out["ends_with_newline"] = data.endswith(b"\\n")
out["saved"] = len(list(rd.iter_rollouts()))
filler.unlink()  # free space, then resume
summary = asyncio.run(run())
out["after_resume"] = sorted((r.task_id, r.rollout_index) for r in rd.iter_rollouts())
out["n_rollouts"] = summary.n_rollouts
print(json.dumps(out))
"""


def test_a_full_disk_stops_the_run_cleanly_and_resume_continues(tmp_path: Path) -> None:
    """In a 256 KiB tmpfs (private mount namespace): the append that hits ENOSPC is cut back,
    the run stops with a clear error, and after freeing space a resume finishes every rollout.

    Verified to fail without the defence: with RolloutWriter writing through
    `self._fh.write(data)` (the old code) the short write is ignored and the run 'finishes'."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare(1) is not installed")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=256k tmpfs {mnt}"], capture_output=True
    )
    if probe.returncode != 0:
        reason = probe.stderr.decode().strip()
        pytest.skip(f"cannot mount a tmpfs in a private mount namespace here: {reason}")
    script = tmp_path / "full_disk.py"
    script.write_text(_FULL_DISK)
    shell = f"mount -t tmpfs -o size=256k tmpfs {mnt} && exec {sys.executable} {script} {mnt}"
    result = subprocess.run(
        ["unshare", "-rm", "sh", "-c", shell], capture_output=True, env=_child_env(), timeout=120
    )
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    out = json.loads(result.stdout.decode().strip().splitlines()[-1])
    assert out["first"].startswith("cannot append to") and "No space left on device" in out["first"]
    assert "verihub eval --resume" in out["first"]
    assert out["ends_with_newline"] and 0 < out["saved"] < 12
    assert out["after_resume"] == sorted([f"t{i}", 0] for i in range(12))
    assert out["n_rollouts"] == 12


def test_a_failed_append_is_cut_back_to_the_last_record(
    config_factory: Callable[..., RunConfig], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that lands part of a record and then fails (what a full disk does)."""
    rd = RunDir(tmp_path)
    rd.create(config_factory())
    real_write = os.write
    calls = {"n": 0}

    def short_then_fail(fd: int, data: Any) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real_write(fd, bytes(data[:100]))  # a short write
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    with rd.open_writer() as w:
        w.write(_rollout(0))
        monkeypatch.setattr(os, "write", short_then_fail)
        with pytest.raises(RunDirError, match="No space left on device.*--resume"):
            w.write(_rollout(1))
        monkeypatch.setattr(os, "write", real_write)
        assert rd.rollouts_path.read_bytes().endswith(b"\n")
        w.write(_rollout(2))
    assert _keys(rd) == Counter({("t0", 0): 1, ("t2", 0): 1})


# -- 4. regrade keeps history and refuses a busy run ---------------------------------------------
async def test_regrade_keeps_the_previous_grades_and_swaps_atomically(tmp_path: Path) -> None:
    from hub.run.evaluate import evaluate, regrade

    out = tmp_path / "run"
    async with FakeChatServer(responder=lambda r: "Answer: 7") as server:
        await evaluate("arith", model="fake", base_url=server.base_url, out=out, num_tasks=4)
    rd = RunDir(out)

    def verdicts() -> list[tuple[float | None, bool]]:
        return [(r.reward, r.passed) for r in rd.iter_rollouts()]

    before = verdicts()
    assert not all(p for _, p in before)
    tampered = [r.model_copy(update={"reward": 1.0, "passed": True}) for r in rd.iter_rollouts()]
    rd.replace_rollouts(tampered, reason="test", keep=False)
    tampered_bytes = rd.rollouts_path.read_bytes()
    _, changed = await regrade(out)
    assert changed == sum(1 for r in RunDir(out).iter_rollouts() if not r.passed)
    history = sorted((out / "regrades").iterdir())
    assert len(history) == 1 and history[0].name.endswith("-regrade.jsonl")
    assert history[0].read_bytes() == tampered_bytes  # the grades it replaced, kept
    assert verdicts() == before  # back to the true grades
    assert not list(out.glob("*.regrade"))  # no temporary left behind
    await regrade(out)
    assert len(list((out / "regrades").iterdir())) == 2  # each regrade adds one


def test_regrade_during_an_evaluation_is_refused(
    config_factory: Callable[..., RunConfig], tmp_path: Path
) -> None:
    rd2 = RunDir(tmp_path / "real")
    rd2.create(config_factory(env_id="arith", num_tasks=2, rollouts=1))
    with rd2.open_writer() as w:
        w.write(_rollout(0))
        result = _cli("regrade", str(rd2.path))
        assert result.returncode == 1
        assert f"is in use by write (pid {os.getpid()}" in result.stderr
    assert _keys(rd2) == Counter({("t0", 0): 1})
    assert not (rd2.path / "regrades").exists()
