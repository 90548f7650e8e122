"""``verihub serve-model`` for real: the embedded model as an OpenAI-compatible server.

The openai SDK is the client (plain and streamed answers); SIGTERM and Ctrl-C (SIGINT) stop it
with exit code 0 and free the port.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hub.run.local_model import local_model_path

openai = pytest.importorskip("openai")

try:
    local_model_path("smollm2")
    import xllamacpp  # noqa: F401

    HAVE_LOCAL = True
except Exception:  # pragma: no cover - CI installs it
    HAVE_LOCAL = False

pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(not HAVE_LOCAL, reason="embedded model not installed (bash scripts/install.sh)"),
]
ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _port_is_free(port: int) -> bool:
    """Nothing listens there any more, and a new server (SO_REUSEADDR, as servers bind) can bind it."""
    with socket.socket() as s:
        if s.connect_ex(("127.0.0.1", port)) == 0:
            return False
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _start(port: int) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "hub", "serve-model", "local:smollm2", "--port", str(port), "--parallel", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        start_new_session=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert "serving local:smollm2 at http://127.0.0.1:" in first, first
    return proc, first


@pytest.fixture
def served() -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = _free_port()
    proc, _ = _start(port)
    try:
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_plain_and_streamed_answers_then_sigterm(served: tuple[subprocess.Popen[str], int]) -> None:
    proc, port = served
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="anything")
    msgs = [{"role": "user", "content": "Say hello."}]
    assert [m.id for m in client.models.list().data] == ["smollm2"]  # the alias, not its letters
    plain = client.chat.completions.create(model="smollm2", messages=msgs, max_tokens=4, temperature=0)
    assert plain.choices[0].message.role == "assistant"
    assert plain.model == "smollm2"
    assert plain.usage is not None and 0 < plain.usage.completion_tokens <= 4
    stream = client.chat.completions.create(
        model="smollm2",
        messages=msgs,
        max_tokens=4,
        temperature=0,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == plain.choices[0].message.content  # greedy decoding: the same words either way
    assert chunks[-1].usage is not None
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out
    assert "stopped" in out
    assert _port_is_free(port)


def test_ctrl_c_stops_cleanly() -> None:
    port = _free_port()
    proc, _ = _start(port)
    try:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == 0, out
        assert _port_is_free(port)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_port_in_use_is_a_one_line_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "hub", "serve-model", "local:smollm2", "--port", str(port)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=60,
        )
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: ") and "--port" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_an_unknown_model_is_a_one_line_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "hub", "serve-model", "local:nope", "--port", str(_free_port())],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert proc.returncode == 1 and "unknown local model 'nope'" in proc.stderr
