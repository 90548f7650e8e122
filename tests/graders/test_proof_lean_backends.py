"""Lean backend selection, the Kimina HTTP client (against a local stand-in server), and checks
against a real ``lean`` that run only where Lean is installed."""

from __future__ import annotations

import shutil
from typing import Any

import pytest
from aiohttp import web

from graders.proof import (
    CheckerConfig,
    CoqChecker,
    KiminaChecker,
    LeanFileChecker,
    LeanNotFoundError,
    LeanReplChecker,
    ProofPolicy,
    make_checker,
)

DEMO = "theorem demo (a b : Nat) : a + b = b + a"
NO_LEAN = shutil.which("lean") is None


def test_no_lean_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("VERIHUB_KIMINA_URL", "VERIHUB_LEAN_REPL", "VERIHUB_LEAN_PROJECT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(LeanNotFoundError, match="elan"):
        make_checker(CheckerConfig(language="lean"))
    with pytest.raises(LeanNotFoundError, match="elan"):
        make_checker(CheckerConfig(language="lean", backend="repl", repl_command=("no-such-repl",)))


def test_backend_chosen_by_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VERIHUB_KIMINA_URL", raising=False)
    assert isinstance(make_checker(CheckerConfig(language="lean", server_url="http://x:1")), KiminaChecker)
    repl = make_checker(CheckerConfig(language="lean", repl_command=("python3",)))
    assert isinstance(repl, LeanReplChecker)
    monkeypatch.setenv("VERIHUB_KIMINA_URL", "http://cluster:8000")
    assert isinstance(make_checker(CheckerConfig(language="lean")), KiminaChecker)
    if shutil.which("coqc"):
        assert isinstance(make_checker(CheckerConfig(language="coq")), CoqChecker)


def _kimina_app(
    seen: list[dict[str, Any]],
    *,
    spoof: bool = False,
    status: int = 200,
    shift: bool = False,
    column: int = 0,
    name: str | None = None,
) -> web.Application:
    """A stand-in Kimina server: answers like the REPL would, with `#print axioms` at its real line.

    ``shift``: positions relative to the code after the import header (as servers that run the
    header apart report them); ``column``/``name``: a misplaced or misnamed axioms answer;
    ``spoof``: the answer on line 1, as if the proof had printed it.
    """

    async def check(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append(body)
        if status != 200:
            return web.Response(status=status, text="overloaded")
        snippet = body["snippets"][0]
        lines = snippet["code"].splitlines()
        dropped = sum(1 for t in lines if t.startswith("import ")) if shift else 0
        if "exact?" in snippet["code"]:
            response: dict[str, Any] = {
                "messages": [
                    {
                        "severity": "error",
                        "pos": {"line": 4 - dropped, "column": 0},
                        "data": "`exact?` could not close the goal.",
                    }
                ],
                "env": 0,
            }
        else:
            line = next(i for i, t in enumerate(lines, 1) if t.startswith("#print axioms"))
            checked = name or lines[line - 1].split("#print axioms ", 1)[1]
            response = {
                "messages": [
                    {
                        "severity": "info",
                        "pos": {"line": 1 if spoof else line - dropped, "column": column},
                        "endPos": {"line": 1 if spoof else line - dropped, "column": column + 6},
                        "data": f"'{checked}' depends on axioms: [propext]",
                    }
                ],
                "env": 0,
            }
        return web.json_response(
            {"results": [{"id": snippet["id"], "time": 0.01, "error": None, "response": response}]}
        )

    app = web.Application()
    app.router.add_post("/api/check", check)
    return app


async def _serve(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


async def test_kimina_client_protocol() -> None:
    seen: list[dict[str, Any]] = []
    runner, url = await _serve(_kimina_app(seen))
    checker = KiminaChecker(url, policy=ProofPolicy(timeout_s=5))
    try:
        ok = await checker.check(DEMO, "by omega", imports=("import Mathlib",))
        bad = await checker.check(DEMO, "by exact?")
        hack = await checker.check(DEMO, "by sorry")
    finally:
        await checker.aclose()
        await runner.cleanup()
    assert ok.status == "proved" and ok.axioms == ("propext",), ok.reason
    assert bad.status == "failed"
    assert hack.status == "failed" and len(seen) == 2  # the sorry never left the machine
    code = seen[0]["snippets"][0]["code"]
    assert code.startswith("import Mathlib\nset_option maxHeartbeats 200000\ndef __verihub_expected_")
    assert ":= @demo\n#print axioms __verihub_check_" in code
    assert seen[0]["timeout"] == 5


@pytest.mark.parametrize(
    ("options", "status"),
    [
        ({"shift": True}, "proved"),  # header run apart: the answer sits exactly at the shifted command
        ({"shift": True, "column": 4}, "error"),  # on the shifted line, but not where the command starts
        ({"shift": True, "name": "demo"}, "error"),  # at the right place, but not the check theorem's answer
        ({"column": 2}, "error"),
    ],
)
async def test_kimina_shifted_positions_must_match_the_command_exactly(
    options: dict[str, Any], status: str
) -> None:
    runner, url = await _serve(_kimina_app([], **options))
    try:
        v = await KiminaChecker(url).check(DEMO, "by omega", imports=("import Mathlib", "import Aesop"))
        failing = await KiminaChecker(url).check(DEMO, "by exact?", imports=("import Mathlib",))
    finally:
        await runner.cleanup()
    assert v.status == status, v.reason
    assert failing.status == "failed", failing.reason


async def test_kimina_spoofed_axioms_line_and_http_errors_are_not_passes() -> None:
    runner, url = await _serve(_kimina_app([], spoof=True))
    try:
        v = await KiminaChecker(url).check(DEMO, "by omega")
    finally:
        await runner.cleanup()
    assert v.status == "error"
    runner, url = await _serve(_kimina_app([], status=503))
    try:
        v = await KiminaChecker(url).check(DEMO, "by omega")
    finally:
        await runner.cleanup()
    assert v.status == "error" and "503" in v.reason
    v = await KiminaChecker("http://127.0.0.1:9").check(DEMO, "by omega", timeout=2)
    assert v.status == "error" and "unreachable" in v.reason


# -- real Lean: runs wherever `lean` is on PATH ------------------------------------------------


@pytest.mark.skipif(NO_LEAN, reason="`lean` not on PATH: install Lean 4 with elan to run real Lean checks")
async def test_real_lean_file_checker() -> None:
    checker = LeanFileChecker(policy=ProofPolicy(timeout_s=60))
    ok = await checker.check(DEMO, "by rw [Nat.add_comm]")
    assert ok.status == "proved", ok.reason
    nd = await checker.check("theorem t : 2 + 2 = 4", "by decide")
    assert nd.status == "proved", nd.reason
    wrong = await checker.check(DEMO, "rfl")
    assert wrong.status == "failed"
    native = await checker.check(
        "theorem t : 2 + 2 = 4",
        "by native_decide",
        policy=ProofPolicy(allow_native_decide=True, timeout_s=60),
    )
    assert native.status == "proved" and "Lean.ofReduceBool" in native.axioms


@pytest.mark.skipif(NO_LEAN, reason="`lean` not on PATH: install Lean 4 with elan to run real Lean checks")
async def test_real_lean_recheck_catches_notation_the_screen_let_through(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from graders.proof import Prepared, lean, parse_statement

    stmt = parse_statement("theorem t : 2 + 2 = 5", "lean")
    notation = 'local notation:65 a:65 " + " b:66 => (a * b + 1 : Nat)'
    source = f"{notation}\n{stmt.text} := by decide"
    hostile = Prepared(statement=stmt, preamble=notation, body="by decide", source=source)
    assert "forbidden `notation`" in (await LeanFileChecker().check(stmt.text, source)).reason
    monkeypatch.setattr(lean, "prepare_lean", lambda *args: hostile)  # bypass the screen on purpose
    v = await LeanFileChecker(policy=ProofPolicy(timeout_s=60)).check(stmt.text, "by decide")
    assert v.status == "failed" and "not the task's statement" in v.reason, v.reason
