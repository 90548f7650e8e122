"""Proof checkers run confined: a proof cannot write files outside its private directory.

Each confinement test has its own control: the same command run unconfined *does* leave the
file, so the test would fail if the confinement were removed.
"""

from __future__ import annotations

import asyncio
import shutil
import uuid
from pathlib import Path

import pytest

from graders.proof._process import run_limited
from graders.proof.confine import UNCONFINED_NOTE, bwrap_available, confined
from graders.proof.forbidden import forbidden_in
from graders.proof.policy import ProofPolicy

needs_bwrap = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap (bwrap) is not usable here")
needs_coq = pytest.mark.skipif(shutil.which("coqc") is None, reason="coqc is not installed")


def _run(argv: list[str], work: Path, *, confine: bool) -> None:
    result = asyncio.run(
        run_limited(argv, cwd=str(work), timeout_s=60, writable=str(work) if confine else None)
    )
    assert not result.timed_out, result


@needs_bwrap
@pytest.mark.sandbox
def test_a_confined_process_writes_only_its_private_directory(tmp_path: Path) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    host_tmp = Path(f"/tmp/verihub-confine-{uuid.uuid4().hex}")
    script = f"echo x > {outside}/leak; echo x > {host_tmp}; echo y > {work}/inside"
    _run(["sh", "-c", script], work, confine=True)
    assert (work / "inside").exists()  # the private directory is writable
    assert not (outside / "leak").exists()  # the rest of the file system is read-only
    assert not host_tmp.exists()  # /tmp is read-only too
    _run(["sh", "-c", script], work, confine=False)  # control: unconfined, the leak happens
    assert (outside / "leak").exists() and host_tmp.exists()
    host_tmp.unlink()


@needs_bwrap
@pytest.mark.sandbox
@needs_coq
def test_coq_redirect_cannot_write_outside_even_past_the_screen(tmp_path: Path) -> None:
    """``Redirect`` is refused by the screen; here the screen is bypassed on purpose and coqc run
    as the grader runs it: the file does not appear."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (work / "Submission.v").write_text(f'Redirect "{outside}/leak" Print nat.\n', encoding="utf-8")
    _run(["coqc", "-q", "Submission.v"], work, confine=True)
    assert not list(outside.iterdir())
    _run(["coqc", "-q", "Submission.v"], work, confine=False)  # control
    assert (outside / "leak.out").exists() or (outside / "leak").exists()


def test_without_bwrap_the_command_is_unchanged_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import graders.proof.confine as confine_module

    monkeypatch.setattr(confine_module, "_bwrap", lambda: None)
    argv, note = confined(["coqc", "x.v"], "/tmp")
    assert argv == ["coqc", "x.v"] and note == UNCONFINED_NOTE


@pytest.mark.parametrize(
    "code",
    [
        'Require "/etc/passwd".',
        'Require Import "Top.file".',
        'From "dir" Require Import A.',
        'Ltac2 @ external leak : unit -> unit := "plugin" "leak".',
        "Pwd.",
        'Print Universes "graph.dot".',
        'Redirect "out" Print nat.',
        'Extraction "f.ml" nat.',
        'Recursive Extraction "f.ml" nat.',
        'Load "x".',
        'Add LoadPath "/x" as X.',
        'Add ML Path "/x".',
        'Declare ML Module "evil".',
        'Locate File "x".',
        'Comments "x".',
        'Cd "/".',
    ],
)
def test_the_screen_refuses_coq_file_commands(code: str) -> None:
    assert forbidden_in(f"Proof. {code} reflexivity. Qed.", "coq", ProofPolicy()) is not None


@pytest.mark.parametrize(
    "code",
    ["From Coq Require Import Arith.", "Require Import Arith.", 'Proof. idtac "hello". reflexivity. Qed.'],
)
def test_the_screen_keeps_ordinary_requires_and_messages(code: str) -> None:
    assert forbidden_in(code, "coq", ProofPolicy()) is None
