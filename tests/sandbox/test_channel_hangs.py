"""No message and no death of the sandboxed side leaves a caller waiting.

A hostile peer answers the first of two pending requests with a malformed line; both calls must
fail at once as tampering (the reader thread used to die on some of these, leaving every call
without a timeout waiting forever). And a sandboxed process that exits while a descendant keeps
the socket open still ends every waiting call.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from hub.sandbox import channel as channel_mod
from hub.sandbox.channel import Channel, ChannelClosedError, TamperingError
from hub.sandbox.policy import Limits
from hub.sandbox.process import SandboxProcess

Bad = Callable[[dict[str, Any]], bytes]


def _line(obj: object) -> bytes:
    return json.dumps(obj).encode() + b"\n"


MALFORMED: dict[str, Bad] = {
    "non-ASCII nonce": lambda r: _line({"id": r["id"], "nonce": "é" * 32, "result": 1}),
    "nonce not a string": lambda r: _line({"id": r["id"], "nonce": 7, "result": 1}),
    "id a boolean": lambda r: _line({"id": True, "nonce": r["nonce"], "result": 1}),
    "id a float": lambda r: _line({"id": float(r["id"]), "nonce": r["nonce"], "result": 1}),
    "id a list": lambda r: _line({"id": [r["id"]], "nonce": r["nonce"], "result": 1}),
    "nested past the parser": lambda r: b"[" * 1500 + b"]" * 1500 + b"\n",
    "not UTF-8": lambda r: b'{"id": 1, "nonce": "\xff\xfe", "result": 1}\n',
    "not JSON": lambda r: b"{nope\n",
    "a JSON list": lambda r: _line([r["id"], r["nonce"]]),
    "oversized": lambda r: b"x" * (2 * 4096 + 10),
}


def _peer(sock: socket.socket, bad: Bad) -> None:
    with sock, sock.makefile("rb") as fh:
        first = json.loads(fh.readline())
        fh.readline()  # the second request: never answered
        try:
            sock.sendall(bad(first))
        except OSError:  # the reader may close first (a line past the cap)
            return
        threading.Event().wait(30)


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_answer_fails_every_pending_call(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(channel_mod, "MAX_LINE", 4096)
    ours, theirs = socket.socketpair()
    threading.Thread(target=_peer, args=(theirs, MALFORMED[case]), daemon=True).start()
    channel = Channel(ours)
    try:
        calls: list[Future[Any]] = [channel.submit("grade", {}), channel.submit("grade", {})]
        for fut in calls:
            with pytest.raises(TamperingError):
                fut.result(timeout=20)  # a bound on the test, not on speed: the defence is instant
        assert channel.tampering is not None
        with pytest.raises(TamperingError):
            channel.call("grade", {}, timeout=20)
    finally:
        channel.close()


_ORPHAN = """
import os, time
if os.fork() == 0:      # a descendant keeps the channel's socket open
    time.sleep(120)
    os._exit(0)
os._exit(3)             # and the sandboxed process itself is gone
"""


def test_a_dead_sandbox_ends_calls_waiting_without_timeout(tmp_path: Path) -> None:
    box = SandboxProcess(
        [sys.executable, "-c", _ORPHAN],
        limits=Limits(wall_s=60.0, cpu_s=60),
        env={"PATH": "/usr/bin:/bin"},
        channel=True,
        unsafe=True,
        unsafe_cwd=tmp_path,
        poll_s=0.05,
    )
    assert box.sock is not None
    channel = Channel(box.sock)
    box.when_ended(lambda: channel.abandon(ChannelClosedError("the sandboxed process ended")))
    outcome: list[BaseException] = []

    def wait() -> None:
        try:
            channel.call("grade", {})  # no timeout at all
        except BaseException as exc:  # noqa: BLE001
            outcome.append(exc)

    waiter = threading.Thread(target=wait, daemon=True)
    try:
        waiter.start()
        waiter.join(timeout=30)
        assert not waiter.is_alive(), "the call still waits after the sandboxed process ended"
        assert isinstance(outcome[0], ChannelClosedError)
    finally:
        box.kill()
        channel.close()
        box.close()
