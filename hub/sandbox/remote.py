"""An :class:`~hub.env.environment.Environment` whose code runs in a sandbox.

:func:`start_environment` binds a staged package (a folder holding the import package and its
``.dist-info``) read-only at :data:`~hub.sandbox.envserver.PACKAGE_DIR`, starts
:mod:`hub.sandbox.envserver` in a fresh sandbox and loads the environment there. The
:class:`RemoteEnvironment` it returns forwards ``tasks``, ``reset``, ``step``, ``grade`` (and
the check's ``gold_response`` / ``render_answer`` hooks) as requests over the channel; ``reset``
and ``step`` stay local when the environment keeps the base class's (they are pure functions
of the task), so a single-turn rollout costs one request. ``verihub eval --sandbox`` and
``verihub check`` both use it, so the package cannot tell the two apart by its surroundings.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
import tempfile
import weakref
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

from graders.grade import Grade
from hub.env import Environment, EnvironmentGoneError, Message, Rollout, State, Step, Task, Timing, Usage
from hub.env.aio import within
from hub.sandbox.bwrap import HOME
from hub.sandbox.channel import Channel, ChannelClosedError, RemoteError, TamperingError
from hub.sandbox.envserver import PACKAGE_DIR
from hub.sandbox.policy import Limits
from hub.sandbox.process import SandboxProcess
from hub.sandbox.redact import clean

__all__ = [
    "RemoteEnvironment",
    "SandboxDiedError",
    "DATA_VARIABLES",
    "PASSED_VARIABLES",
    "code_roots",
    "data_roots",
    "sandbox_env",
    "start_environment",
    "start_installed",
]

_CHUNK = 256
PASSED_VARIABLES = (
    "VERIHUB_SHARED_DATA",
    "VERIHUB_EVENT_LOOP",
    "VERIHUB_PROOF_CONFINE",
    "VERIHUB_LEAN_PROJECT",
)
"""The host's variables an environment may see (when set): named, never a pattern. The
server's own settings (database URL, data folder, tokens) are none of them."""
DATA_VARIABLES = ("VERIHUB_SHARED_DATA", "VERIHUB_LEAN_PROJECT")
"""Of those, the ones that name a folder the sandbox may read (bound read-only)."""


class SandboxDiedError(EnvironmentGoneError):
    """The sandboxed environment is gone; the message says why (a limit, a crash, tampering).
    ``returncode`` is the sandbox's exit code when it has one."""

    def __init__(self, message: str, returncode: int | None = None) -> None:
        super().__init__(message)
        self.returncode = returncode


def code_roots() -> list[Path]:
    """verihub's own code (``hub`` and ``graders``), bound read-only into every sandbox."""
    import graders
    import hub

    return [Path(os.path.realpath(str(m.__file__))).parent for m in (hub, graders)]


def data_roots(extra: Sequence[str] = ()) -> list[Path]:
    """Data folders bound read-only into the sandbox: those :data:`DATA_VARIABLES` name, and
    ``extra`` (``--allow-read``). No cache or credential folder of the host (the Hugging Face
    home, ``~/.cache``) is bound: a package that needs a dataset names it with ``--allow-read``."""
    names = [os.environ[key] for key in DATA_VARIABLES if os.environ.get(key)]
    names += list(extra)
    return sorted({Path(os.path.realpath(p)) for p in names if os.path.isabs(p) and os.path.exists(p)})


def sandbox_env(read: Sequence[Path], unsafe_home: str | None = None) -> dict[str, str]:
    """The whole environment of a sandboxed environment server: an allow-list, built from
    scratch (nothing of ``os.environ`` but :data:`PASSED_VARIABLES`)."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": unsafe_home or HOME,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TMPDIR": unsafe_home or HOME,
        # a fresh hash seed per sandbox: the check's two loads differ in it, and so does every eval
        "PYTHONHASHSEED": str(secrets.randbelow(2**32)),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": os.path.dirname(str(code_roots()[0])),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "VERIHUB_SANDBOX_READ": json.dumps([str(p) for p in read]),
    }
    for key in PASSED_VARIABLES:
        value = os.environ.get(key)
        if value:
            env[key] = value
    return env


_BLANK_TIMING = Timing(started_at=0.0)


def _for_grading(rollout: Rollout) -> dict[str, Any]:
    """What of a rollout a sandboxed grader sees (the same for a check and an evaluation)."""
    blank = {"usage": Usage(), "timing": _BLANK_TIMING, "extra": {}, "reward": None, "passed": False}
    return dict(rollout.model_copy(update={**blank, "grade": None, "error": None}).model_dump(mode="json"))


class RemoteEnvironment(Environment):
    """The proxy (see the module docstring). Call :meth:`close` (or ``aclose``) when done."""

    def __init__(self, box: SandboxProcess, channel: Channel, info: Mapping[str, Any]) -> None:
        super().__init__(
            id=str(info["id"]), version=str(info["version"]), system_prompt=info.get("system_prompt")
        )
        self.max_turns = int(info.get("max_turns") or 1)
        self.box = box
        self.channel = channel
        self.info = dict(info)
        self._splits = tuple(str(s) for s in info["splits"])
        self._tools = info.get("tool_schemas")
        self._remote_reset = bool(info["overrides"]["reset"])
        self._remote_step = bool(info["overrides"]["step"])
        hooks = set(info.get("hooks") or ())
        if "gold_response" in hooks:
            self.gold_response = self._gold_response
        if "render_answer" in hooks:
            self.render_answer = self._render_answer
        self._closed = False

    def __repr__(self) -> str:
        return f"{clean(self.info.get('repr', super().__repr__()), 200)} (sandboxed)"

    def data_sources(self) -> list[dict[str, Any]]:
        """The datasets the package says it loaded inside the sandbox (``hub.env.provenance``).

        The package reports them, so they are only as trustworthy as the package: each entry is
        marked ``reported_by: sandbox`` and kept to plain short scalars (50 entries at most)."""
        out: list[dict[str, Any]] = []
        raw = self.info.get("data")
        for item in raw[:50] if isinstance(raw, list) else []:
            if not isinstance(item, dict):
                continue
            clean = {
                str(k)[:40]: (v[:500] if isinstance(v, str) else v)
                for k, v in item.items()
                if isinstance(k, str) and (v is None or isinstance(v, (str, int, float, bool)))
            }
            out.append({**clean, "reported_by": "sandbox"})
        return out

    # -- requests ------------------------------------------------------------------------------
    def _why(self, exc: BaseException) -> SandboxDiedError:
        if isinstance(exc, TamperingError):
            return SandboxDiedError(f"tampering: the sandboxed package sent {exc}")
        self.box.wait(timeout=2.0)
        why = f"the sandboxed environment {self.id} stopped: {self.box.failure()}"
        return SandboxDiedError(why, self.box.proc.returncode)

    def call(self, method: str, params: Mapping[str, Any] | None = None, timeout: float | None = None) -> Any:
        try:
            return self.channel.call(method, params, timeout=timeout)
        except (ChannelClosedError, TamperingError) as exc:
            raise self._why(exc) from None
        except FutureTimeout:
            raise TimeoutError(f"no answer to {method} within {timeout}s") from None

    async def acall(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        try:
            return await self.channel.acall(method, params)
        except (ChannelClosedError, TamperingError) as exc:
            raise self._why(exc) from None

    # -- the Environment API -------------------------------------------------------------------
    @property
    def splits(self) -> tuple[str, ...]:
        return self._splits

    def tasks(self, split: str = "test", *, seed: int = 0) -> Iterator[Task]:
        start = 0
        while True:
            rows = self.call("tasks", {"split": split, "seed": seed, "start": start, "count": _CHUNK})
            for row in rows:
                yield Task.model_validate(row)
            if len(rows) < _CHUNK:
                return
            start += len(rows)

    def num_tasks(self, split: str = "test") -> int | None:
        n = self.call("num_tasks", {"split": split})
        return None if n is None else int(n)

    def tool_schemas(self) -> list[dict[str, Any]] | None:
        return self._tools

    async def reset(self, task: Task) -> State:
        if not self._remote_reset:
            return await super().reset(task)
        out = await self.acall("reset", {"task": task.model_dump(mode="json")})
        state = State(task=task, messages=[Message.model_validate(m) for m in out["messages"]])
        state.data["sandbox_state"] = handle = int(out["state"])
        weakref.finalize(state, self._release, handle)
        return state

    def _release(self, handle: int) -> None:
        if not self._closed and not self.channel.closed:
            self.channel.submit("release", {"state": handle})

    async def step(self, state: State, action: Message) -> Step:
        if not self._remote_step:
            return await super().step(state, action)
        if "sandbox_state" not in state.data:  # reset ran locally: give the server a state
            out = await self.acall("reset", {"task": state.task.model_dump(mode="json")})
            state.data["sandbox_state"] = handle = int(out["state"])
            weakref.finalize(state, self._release, handle)
        out = await self.acall(
            "step",
            {
                "state": state.data["sandbox_state"],
                "messages": [m.model_dump(mode="json") for m in state.messages],
                "turn": state.turn,
                "action": action.model_dump(mode="json"),
            },
        )
        return Step(
            messages=tuple(Message.model_validate(m) for m in out["messages"]),
            terminated=bool(out["terminated"]),
            truncated=bool(out["truncated"]),
            info=dict(out.get("info") or {}),
        )

    async def grade(self, task: Task, rollout: Rollout) -> Grade:
        """Grade in the sandbox. The rollout crosses without its timing, usage, verdict fields and
        runner extras: a grader has no use for them, and the check's rollouts (built, not run)
        would differ from an evaluation's there."""
        params = {"task": task.model_dump(mode="json"), "rollout": _for_grading(rollout)}
        return Grade.model_validate(await self.acall("grade", params))

    def _gold_response(self, task: Task) -> str | None:
        value = self.call("gold_response", {"task": task.model_dump(mode="json")})
        return None if value is None else str(value)

    def _render_answer(self, answer: Any) -> str:
        return str(self.call("render_answer", {"answer": answer}))

    def tripwire(self) -> list[dict[str, str]]:
        """What the sandbox's audit hook noted since the last call (a tripwire, see
        :mod:`hub.sandbox.tripwire`)."""
        return list(self.call("tripwire", {}))

    async def aclose(self) -> None:
        if not self._closed:
            try:
                await within(self.acall("aclose", {}), 10.0)
            except (SandboxDiedError, RemoteError, asyncio.TimeoutError):
                pass
        self.close()

    def close(self) -> None:
        """End the sandbox (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.channel.close()
        self.box.close()
        for tmp in (self._unsafe_tmp, self._stage_dir):
            if tmp is not None:
                from hub.sandbox.stage import make_writable

                make_writable(Path(tmp.name))
                tmp.cleanup()

    _unsafe_tmp: tempfile.TemporaryDirectory[str] | None = None
    _stage_dir: tempfile.TemporaryDirectory[str] | None = None


def start_environment(
    stage: Path,
    env_id: str | None,
    env_args: Mapping[str, Any] | None = None,
    *,
    limits: Limits | None = None,
    read: Sequence[str] = (),
    unsafe: bool = False,
    load_timeout_s: float | None = None,
) -> RemoteEnvironment:
    """Start the environment ``env_id`` of the staged package ``stage`` in a sandbox.

    Raises :class:`~hub.sandbox.channel.RemoteError` when loading fails in the sandbox,
    :class:`SandboxDiedError` when the sandbox dies first, and
    :class:`~hub.sandbox.process.SandboxUnavailableError` when no sandbox can be made here
    (``unsafe=True`` then runs the same server as a plain child process).
    """
    lim = limits or Limits()
    data = data_roots(read)
    tmp = tempfile.TemporaryDirectory(prefix="verihub-unsafe-") if unsafe else None
    env = sandbox_env(data, tmp.name if tmp is not None else None)
    if unsafe:
        env["VERIHUB_SANDBOX_PACKAGE"] = str(stage)
    box = SandboxProcess(
        [sys.executable, "-m", "hub.sandbox.envserver"],
        limits=lim,
        env=env,
        ro_binds=[*code_roots(), *data],
        ro_map=[(stage, PACKAGE_DIR)],
        channel=True,
        unsafe=unsafe,
        unsafe_cwd=Path(tmp.name) if tmp is not None else None,
    )
    assert box.sock is not None
    channel = Channel(box.sock)
    # a call waiting without a timeout ends when the sandbox does, whoever holds the socket
    box.when_ended(lambda: channel.abandon(ChannelClosedError("the sandboxed process ended")))
    try:
        info = channel.call(
            "load", {"env_id": env_id, "env_args": dict(env_args or {})}, timeout=load_timeout_s or lim.wall_s
        )
    except (ChannelClosedError, TamperingError) as exc:
        channel.close()
        box.wait(timeout=2.0)
        box.close()
        why = f"tampering: {exc}" if isinstance(exc, TamperingError) else box.failure()
        raise SandboxDiedError(why, box.proc.returncode) from None
    except BaseException:
        channel.close()
        box.close()
        raise
    remote = RemoteEnvironment(box, channel, info)
    remote._unsafe_tmp = tmp
    return remote


def start_installed(
    env_id: str,
    env_args: Mapping[str, Any] | None = None,
    *,
    limits: Limits | None = None,
    unsafe: bool = False,
) -> RemoteEnvironment:
    """Stage the installed environment ``env_id`` and start it in a sandbox
    (``verihub eval --sandbox``); the stage is removed when the environment is closed.

    Arguments that name an existing absolute path (a local copy of a dataset, as in
    ``--env-arg path=/data/gsm8k``) are bound read-only: the user named them to be read."""
    from hub.sandbox.stage import STAGE_PREFIX, make_writable, stage_installed

    named = [
        v for v in (env_args or {}).values() if isinstance(v, str) and os.path.isabs(v) and os.path.exists(v)
    ]

    work = tempfile.TemporaryDirectory(prefix=STAGE_PREFIX)
    try:
        stage, _name = stage_installed(env_id, Path(work.name) / "stage")
        remote = start_environment(stage, env_id, env_args, limits=limits, read=named, unsafe=unsafe)
    except BaseException:
        make_writable(Path(work.name))
        work.cleanup()
        raise
    remote._stage_dir = work
    return remote
