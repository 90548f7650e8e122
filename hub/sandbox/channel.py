"""Request and response over one socket, in JSON lines, where only answers to questions count.

The trusted side (:class:`Channel`) sends ``{"id", "nonce", "method", "params"}``; the id
counts up and the nonce is 128 fresh random bits per request. The sandboxed side
(:func:`serve`) answers ``{"id", "nonce", "result"}`` or ``{"id", "nonce", "error"}``. Any line
that is not valid JSON, not an object of exactly those keys, answers no pending request, or
carries the wrong nonce is *tampering*: the channel is closed, every pending call raises
:class:`TamperingError`, and so does every later one. The sandboxed code thus can only answer
the questions it is asked; the verdicts are drawn outside from those answers.

The reader never dies quietly: whatever a line does to it (a non-ASCII nonce, nesting too deep
for the JSON parser, a line past :data:`MAX_LINE`), every pending call fails at once. The
sandbox's supervisor calls :meth:`Channel.abandon` when the sandboxed process ends, so a call
waiting without a timeout gets an error then, even if a descendant still holds the socket.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import threading
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import Future, InvalidStateError
from typing import Any

__all__ = ["Channel", "ChannelClosedError", "RemoteError", "TamperingError", "serve"]

MAX_LINE = 64 * 1024 * 1024
_ANSWER_KEYS = ({"id", "nonce", "result"}, {"id", "nonce", "error"})


class ChannelClosedError(RuntimeError):
    """The sandboxed side closed the channel (it exited, crashed or was killed)."""


class TamperingError(RuntimeError):
    """The sandboxed side sent something that answers no question asked."""


class RemoteError(Exception):
    """The sandboxed code raised: ``kind`` is the exception's type name."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


class Channel:
    """The trusted end: ``call`` (blocking) and ``acall`` (awaitable) match answers to requests."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._lock = threading.Lock()
        self._pending: dict[int, tuple[str, Future[Any]]] = {}
        self._next = 0
        self.tampering: str | None = None
        self.closed = False
        self._reader = threading.Thread(target=self._read, name="verihub-channel", daemon=True)
        self._reader.start()

    # -- reading ---------------------------------------------------------------------------------
    def _read(self) -> None:
        parts: list[bytes] = []  # the unfinished line, in pieces (no quadratic re-joining)
        size = 0
        why: BaseException = ChannelClosedError("the sandboxed process closed the channel")
        try:
            while True:
                chunk = self._sock.recv(1 << 16)
                if not chunk:
                    break
                if b"\n" not in chunk:
                    parts.append(chunk)
                    size += len(chunk)
                    if size > MAX_LINE:
                        raise TamperingError(f"a line longer than {MAX_LINE} bytes")
                    continue
                *lines, rest = b"".join([*parts, chunk]).split(b"\n")
                parts, size = [rest], len(rest)
                for line in lines:
                    self._answer(line)
        except TamperingError as exc:
            self.tampering = str(exc)
            why = exc
        except OSError:
            pass
        except Exception as exc:  # noqa: BLE001 (anything a line does to the reader is tampering)
            why = TamperingError(f"a message the reader cannot handle ({type(exc).__name__})")
            self.tampering = str(why)
        self._fail_all(why)

    def _answer(self, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except ValueError as exc:
            raise TamperingError(f"not JSON: {line[:80]!r}") from exc
        if not isinstance(msg, dict) or set(msg) not in _ANSWER_KEYS:
            raise TamperingError(f"not an answer: {line[:80]!r}")
        rid = msg["id"]
        with self._lock:
            # exactly int: True would find request 1
            entry = self._pending.get(rid) if type(rid) is int else None
            if entry is None:
                raise TamperingError(f"an answer to no pending request (id {str(rid)[:40]!r})")
            nonce, fut = entry
            given = msg["nonce"]
            # compared as bytes: compare_digest raises TypeError on a non-ASCII str
            if not isinstance(given, str) or not secrets.compare_digest(
                given.encode("utf-8", "surrogatepass"), nonce.encode("ascii")
            ):
                raise TamperingError(f"an answer with the wrong nonce (id {rid})")
            del self._pending[msg["id"]]
        try:
            if "error" in msg:
                err = msg["error"] if isinstance(msg["error"], dict) else {}
                kind, text = str(err.get("type", "Error")), str(err.get("message", ""))[:2000]
                fut.set_exception(RemoteError(kind, text))
            else:
                fut.set_result(msg["result"])
        except InvalidStateError:  # the caller stopped waiting (a timeout): a late answer is fine
            pass

    def _fail_all(self, exc: BaseException) -> None:
        with self._lock:
            self.closed = True
            pending, self._pending = self._pending, {}
        for _nonce, fut in pending.values():
            if not fut.done():
                fut.set_exception(exc)
        try:
            self._sock.close()
        except OSError:
            pass

    def abandon(self, why: BaseException, grace_s: float = 1.0) -> None:
        """The sandboxed process ended: let the reader take what was sent before (up to
        ``grace_s``), then fail every call still waiting with ``why``."""
        if threading.current_thread() is not self._reader:
            self._reader.join(timeout=grace_s)
        self._fail_all(why)

    # -- asking ----------------------------------------------------------------------------------
    def submit(self, method: str, params: Mapping[str, Any]) -> Future[Any]:
        """Send one request; the future holds its answer (or the reason there is none)."""
        fut: Future[Any] = Future()
        nonce = secrets.token_hex(16)
        with self._lock:
            if self.closed:
                fut.set_exception(
                    TamperingError(self.tampering)
                    if self.tampering
                    else ChannelClosedError("the sandboxed process closed the channel")
                )
                return fut
            self._next += 1
            rid = self._next
            self._pending[rid] = (nonce, fut)
            data = (
                json.dumps({"id": rid, "nonce": nonce, "method": method, "params": params}).encode() + b"\n"
            )
            try:
                self._sock.sendall(data)
            except OSError as exc:
                self._pending.pop(rid, None)
                fut.set_exception(ChannelClosedError(f"the sandboxed process is gone ({exc})"))
        return fut

    def call(self, method: str, params: Mapping[str, Any] | None = None, timeout: float | None = None) -> Any:
        return self.submit(method, params or {}).result(timeout=timeout)

    async def acall(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        return await asyncio.wrap_future(self.submit(method, params or {}))

    def close(self) -> None:
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._reader.join(timeout=5)


Handler = Callable[[Mapping[str, Any]], Awaitable[Any]]


async def serve(fd: int, handlers: Mapping[str, Handler]) -> None:
    """The sandboxed end: answer each request on ``fd`` with its handler until the peer closes."""
    sock = socket.socket(fileno=fd)
    reader, writer = await asyncio.open_connection(sock=sock, limit=MAX_LINE)
    running: set[asyncio.Task[None]] = set()

    async def answer(req: dict[str, Any]) -> None:
        head = {"id": req.get("id"), "nonce": req.get("nonce")}
        handler = handlers.get(str(req.get("method")))
        try:
            if handler is None:
                raise LookupError(f"no method {req.get('method')!r}")
            msg = {**head, "result": await handler(req.get("params") or {})}
        except Exception as exc:  # the caller decides what a failure means
            msg = {**head, "error": {"type": type(exc).__name__, "message": str(exc)[:2000]}}
        try:
            line = json.dumps(msg, default=str).encode() + b"\n"
        except (TypeError, ValueError) as exc:
            line = json.dumps({**head, "error": {"type": "TypeError", "message": str(exc)}}).encode() + b"\n"
        writer.write(line)
        await writer.drain()

    while True:
        line = await reader.readline()
        if not line:
            break
        task = asyncio.create_task(answer(json.loads(line)))
        running.add(task)
        task.add_done_callback(running.discard)
    writer.close()
