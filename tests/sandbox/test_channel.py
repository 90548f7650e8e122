"""The channel accepts only answers to questions asked: a fake sandboxed peer tries to forge.

The ``answer`` case is the control: the same peer, answering the request it was sent with its
nonce, is believed. Every other case differs from it in one respect and must be refused.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from typing import Any

import pytest

from hub.sandbox.channel import Channel, RemoteError, TamperingError

Forge = Callable[[dict[str, Any]], list[bytes]]


def _line(obj: object) -> bytes:
    return json.dumps(obj).encode() + b"\n"


CASES: dict[str, Forge] = {
    "answer": lambda req: [_line({"id": req["id"], "nonce": req["nonce"], "result": "honest"})],
    "unsolicited first": lambda req: [
        _line({"id": req["id"] + 1, "nonce": req["nonce"], "result": "forged"}),
        _line({"id": req["id"], "nonce": req["nonce"], "result": "honest"}),
    ],
    "wrong nonce": lambda req: [_line({"id": req["id"], "nonce": "0" * 32, "result": "forged"})],
    "answered twice": lambda req: [
        _line({"id": req["id"], "nonce": req["nonce"], "result": "honest"}),
        _line({"id": req["id"], "nonce": req["nonce"], "result": "forged"}),
    ],
    "not json": lambda req: [b'{"event": "result", "status": "pass"\n'],
    "old event stream": lambda req: [_line({"event": "result", "name": "gold", "status": "pass"})],
    "extra key": lambda req: [
        _line({"id": req["id"], "nonce": req["nonce"], "result": "x", "verdict": "pass"})
    ],
}


def _peer(sock: socket.socket, forge: Forge) -> None:
    with sock, sock.makefile("rb") as fh:
        for raw in fh:
            for line in forge(json.loads(raw)):
                sock.sendall(line)


@pytest.mark.parametrize("case", list(CASES))
def test_only_answers_to_pending_requests_count(case: str) -> None:
    ours, theirs = socket.socketpair()
    threading.Thread(target=_peer, args=(theirs, CASES[case]), daemon=True).start()
    channel = Channel(ours)
    try:
        if case == "answer":
            assert channel.call("grade", {}, timeout=5) == "honest"
            assert channel.call("grade", {}, timeout=5) == "honest"  # and again: nonces are per request
            assert channel.tampering is None
            return
        with pytest.raises(TamperingError):
            channel.call("grade", {}, timeout=5)
            channel.call("grade", {}, timeout=5)  # "answered twice" is caught on the next read
        assert channel.tampering is not None
        with pytest.raises(TamperingError):  # and the channel stays closed
            channel.call("grade", {}, timeout=5)
    finally:
        channel.close()


def test_remote_exceptions_are_errors_not_verdicts() -> None:
    ours, theirs = socket.socketpair()

    def fail(req: dict[str, Any]) -> list[bytes]:
        error = {"type": "ValueError", "message": "no"}
        return [_line({"id": req["id"], "nonce": req["nonce"], "error": error})]

    threading.Thread(target=_peer, args=(theirs, fail), daemon=True).start()
    channel = Channel(ours)
    with pytest.raises(RemoteError, match="ValueError: no"):
        channel.call("grade", {}, timeout=5)
    channel.close()
