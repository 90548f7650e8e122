"""The Coq backend: ``coqc`` in a fresh temporary directory, checked twice by the kernel.

1. :func:`graders.proof.screen.prepare` screens the model's text and builds ``Submission.v``.
2. ``coqc`` compiles it under a hard wall-clock kill and an address-space cap.
3. ``Check.v`` elaborates the task's statement in a clean file *before* loading the submission,
   asks the kernel to accept ``@Submission.NAME`` at exactly that type and prints ``Print
   Assumptions``; the model's code never runs there, and :func:`parse_coq_assumptions` reads the
   output failing closed. A redefined ``nat`` or a weaker theorem cannot pass; ``Admitted``,
   ``Axiom`` or an unguarded fixpoint shows in the assumptions.
4. ``coqchk -norec`` re-types ``Submission.vo``: ``Print Assumptions`` misses unsafe flags that
   reach a constant through a functor application (Coq bugs 12155, 16646 and 22366 upstream).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import tempfile
import time

from graders.proof.errors import BackendNotFoundError
from graders.proof.policy import ProofPolicy
from graders.proof.screen import Prepared, parse_statement, prepare
from graders.proof.verdict import ProofMessage, ProofVerdict

from ._process import ProcessResult, run_limited
from .confine import UNCONFINED_NOTE, bwrap_available

__all__ = ["CoqChecker", "parse_coq_assumptions"]

_SUB_LIB = "VerihubSub"
_PRINT_WIDTH = 100_000  # one line per assumption; the parser still folds continuation lines
_MSG = re.compile(r'File "[^"]*", line (\d+), characters \d+-\d+:\n(.*?)(?=\nFile "|\Z)', re.DOTALL)


_CLOSED = "Closed under the global context"
_SECTIONS = frozenset(
    {"Axioms:", "Section Variables:", "Opaque constants:", "Transparent constants:", "Theory:"}
)


def parse_coq_assumptions(output: str) -> tuple[str, ...]:
    """Axioms (and unsafe-feature notes) from ``Print Assumptions`` output; fails closed.

    Only the exact line ``Closed under the global context`` means "none". Otherwise the output
    is a sequence of section headers (``Axioms:``, ``Theory:``...) each followed by entries: an
    entry starts on an unindented line, and indented lines continue it (Coq breaks an entry whose
    name and type are wider than the print width, putting the name alone on its line). Every
    entry counts: ``name : type`` gives ``name``; anything else (``f is assumed to be guarded.``,
    ``Set is impredicative``) gives ``"unsafe: <entry>"``, which no allow-list matches.
    Raises ``ValueError`` on anything else (an empty output, an entry before any header, a header
    with no entry), so that unreadable output is an error, never a pass.
    """
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    if [line.strip() for line in lines] == [_CLOSED]:
        return ()
    if not lines:
        raise ValueError("empty `Print Assumptions` output")
    entries: list[tuple[str, str]] = []
    section: str | None = None
    for line in lines:
        if line[0].isspace():
            if not entries or entries[-1][0] != section:
                raise ValueError(f"continuation line without an entry: {line.strip()[:80]!r}")
            entries[-1] = (entries[-1][0], entries[-1][1] + " " + line.strip())
        elif line in _SECTIONS:
            if section is not None and (not entries or entries[-1][0] != section):
                raise ValueError(f"section {section!r} has no entries")
            section = line
        elif section is None:
            raise ValueError(f"unexpected line in `Print Assumptions` output: {line[:80]!r}")
        else:
            entries.append((section, line.strip()))
    if section is None or not entries or entries[-1][0] != section:
        raise ValueError(f"section {section!r} has no entries")
    found: list[str] = []
    for sect, entry in entries:
        if sect != "Theory:" and " : " in entry:
            found.append(entry.split(" : ", 1)[0].strip())
        else:
            found.append("unsafe: " + entry)
    return tuple(found)


def _to_forall(signature: str) -> str:
    """``(n : nat) : P n`` -> ``forall (n : nat), P n``; ``: P`` -> ``P``."""
    depth = 0
    for i, ch in enumerate(signature):
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        elif ch == ":" and depth == 0 and signature[i + 1 : i + 2] != "=":
            binders, typ = signature[:i].strip(), signature[i + 1 :].strip()
            return f"forall {binders}, {typ}" if binders else typ
    return signature


def _messages(result: ProcessResult) -> tuple[ProofMessage, ...]:
    text = (result.stdout + "\n" + result.stderr).strip()
    found = [
        ProofMessage(severity="error" if "Error" in body else "warning", text=body.strip(), line=int(line))
        for line, body in _MSG.findall(text)
    ]
    if not found and text:
        found.append(ProofMessage(severity="error", text=text[-2000:]))
    return tuple(found)


class CoqChecker:
    """Checks Coq proofs with the real kernel (``coqc``); see the module docstring.

    ``coqc``: path of the binary (default: found on PATH). ``coqchk``: Coq's independent checker,
    run on every compiled proof (default: next to ``coqc``, else on PATH; skipped only where it is
    not installed). ``max_concurrency``: checks run at once (default: the CPU count).
    ``policy``: default rules, overridable per check.
    """

    language = "coq"

    def __init__(
        self,
        *,
        coqc: str | None = None,
        coqchk: str | None = None,
        policy: ProofPolicy | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        found = coqc or shutil.which("coqc")
        if found is None:
            raise BackendNotFoundError(
                "coqc not found. Install Coq: `apt-get install -y coq` (see docs/proofs.md)."
            )
        self.coqc = found
        sibling = os.path.join(os.path.dirname(found), "coqchk")
        self.coqchk = coqchk or (sibling if os.access(sibling, os.X_OK) else shutil.which("coqchk"))
        self.policy = policy or ProofPolicy()
        self._sem = asyncio.Semaphore(max_concurrency or os.cpu_count() or 1)

    async def aclose(self) -> None:
        return None

    async def check(
        self,
        statement: str,
        proof: str,
        *,
        imports: tuple[str, ...] = (),
        timeout: float | None = None,
        policy: ProofPolicy | None = None,
    ) -> ProofVerdict:
        pol = policy or self.policy
        try:
            stmt = parse_statement(statement, "coq")
        except ValueError as exc:
            return ProofVerdict.error(f"malformed task statement: {exc}", backend="coq")
        prepared = prepare(stmt, proof, policy=pol, imports=imports)
        if isinstance(prepared, ProofVerdict):
            return ProofVerdict.failed(prepared.reason, backend="coq")
        async with self._sem:
            start = time.monotonic()
            verdict = await self._run(prepared, imports, timeout or pol.timeout_s, pol)
        return ProofVerdict(
            status=verdict.status,
            reason=verdict.reason if bwrap_available() else f"{verdict.reason} ({UNCONFINED_NOTE})",
            messages=verdict.messages,
            goals=verdict.goals,
            axioms=verdict.axioms,
            elapsed_s=time.monotonic() - start,
            backend="coq",
        )

    async def _coqc(self, workdir: str, file: str, deadline: float, pol: ProofPolicy) -> ProcessResult | None:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        argv = [self.coqc, "-q", "-Q", workdir, _SUB_LIB, file]
        result = await run_limited(
            argv, cwd=workdir, timeout_s=left, memory_bytes=pol.memory_bytes("coq"), writable=workdir
        )
        return None if result.timed_out else result

    async def _run(
        self, prep: Prepared, imports: tuple[str, ...], timeout: float, pol: ProofPolicy
    ) -> ProofVerdict:
        header = "\n".join(imports)
        deadline = time.monotonic() + timeout
        limit = f"killed at the {timeout:g}s wall-clock limit"
        with tempfile.TemporaryDirectory(prefix="verihub-coq-") as workdir:
            with open(os.path.join(workdir, "Submission.v"), "w", encoding="utf-8") as fh:
                fh.write(f"{header}\n{prep.source}\n")
            sub = await self._coqc(workdir, "Submission.v", deadline, pol)
            if sub is None:
                return ProofVerdict(status="timeout", reason=limit)
            if sub.returncode != 0:
                msgs = _messages(sub)
                goals = await self._goals(workdir, header, prep, deadline, pol) if _incomplete(msgs) else ()
                first = msgs[0].text.splitlines()[0] if msgs else f"coqc exited with {sub.returncode}"
                return ProofVerdict(
                    status="failed", reason=f"Coq rejected the proof: {first}", messages=msgs, goals=goals
                )
            stmt = prep.statement
            check = (
                f"{header}\nDefinition __verihub_expected := {_to_forall(stmt.signature)}.\n"
                f"Require {_SUB_LIB}.Submission.\n"
                f"Definition __verihub_check : __verihub_expected := @{_SUB_LIB}.Submission.{stmt.name}.\n"
                f"Set Printing Width {_PRINT_WIDTH}.\n"
                "Print Assumptions __verihub_check.\n"
            )
            with open(os.path.join(workdir, "Check.v"), "w", encoding="utf-8") as fh:
                fh.write(check)
            res = await self._coqc(workdir, "Check.v", deadline, pol)
            if res is None:
                return ProofVerdict(status="timeout", reason=limit)
            if res.returncode != 0:
                return ProofVerdict(
                    status="failed",
                    messages=_messages(res),
                    reason="the proved theorem is not the task's statement (kernel re-check failed)",
                )
            try:
                axioms = parse_coq_assumptions(res.stdout)
            except ValueError as exc:
                return ProofVerdict.error(f"could not read `Print Assumptions` output ({exc}); not a pass")
            allowed = pol.axioms_for("coq")
            bad = [a for a in axioms if not _allowed(a, allowed)]
            if bad:
                return ProofVerdict(
                    status="failed",
                    axioms=axioms,
                    reason="uses axioms outside the allow-list: " + ", ".join(bad),
                )
            why = await self._coqchk(workdir, deadline, pol)
            if why is not None:
                return why
            return ProofVerdict(status="proved", axioms=axioms, reason="the kernel accepted the proof")

    async def _coqchk(self, workdir: str, deadline: float, pol: ProofPolicy) -> ProofVerdict | None:
        """Re-check ``Submission.vo`` with ``coqchk`` (libraries it requires are trusted); None if fine.

        ``Print Assumptions`` misses unsafe typing flags that reach a constant through a functor
        application (Coq issues #12155, #16646: ``Parameter Inline`` and ``Unset Universe
        Checking``); ``coqchk`` re-types the compiled file and rejects it. Its context summary must
        also list no constant relying on type-in-type, unguarded (co)fixpoints or assumed positivity.
        """
        if self.coqchk is None:
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            return ProofVerdict(status="timeout", reason="killed at the wall-clock limit (coqchk)")
        argv = [self.coqchk, "-silent", "-o", "-Q", workdir, _SUB_LIB, "-norec", f"{_SUB_LIB}.Submission"]
        res = await run_limited(
            argv, cwd=workdir, timeout_s=left, memory_bytes=pol.memory_bytes("coq"), writable=workdir
        )
        if res.timed_out:
            return ProofVerdict(status="timeout", reason="killed at the wall-clock limit (coqchk)")
        text = (res.stdout + "\n" + res.stderr).strip()
        if res.returncode != 0:
            last = text.splitlines()[-1] if text else f"exit status {res.returncode}"
            return ProofVerdict(
                status="failed",
                messages=(ProofMessage(severity="error", text=text[-2000:]),),
                reason=f"Coq's independent checker (coqchk) rejected the compiled proof: {last}",
            )
        unsafe = _coqchk_unsafe(text)  # coqchk prints its summary on stderr
        if unsafe is None:
            return ProofVerdict.error("could not read coqchk's context summary; not a pass")
        if unsafe:
            return ProofVerdict(
                status="failed", reason="coqchk: relies on unsafe typing flags: " + ", ".join(unsafe)
            )
        return None

    async def _goals(
        self, workdir: str, header: str, prep: Prepared, deadline: float, pol: ProofPolicy
    ) -> tuple[str, ...]:
        """The goals left open when the proof ends (a diagnostic re-run; not part of the verdict)."""
        body = re.sub(r"\b(Qed|Defined)\.\s*$", "", prep.body.strip())
        diag = f"{header}\n{prep.preamble}\n{prep.statement.text}\n{body}\nShow.\nAbort.\n"
        with open(os.path.join(workdir, "Goals.v"), "w", encoding="utf-8") as fh:
            fh.write(diag)
        res = await self._coqc(workdir, "Goals.v", min(deadline, time.monotonic() + 5), pol)
        if res is None or not res.stdout.strip():
            return ()
        return tuple(g.strip() for g in re.split(r"\n(?=goal \d+ is:)", res.stdout.strip()) if g.strip())


_COQCHK_UNSAFE = (
    "Constants/Inductives relying on type-in-type:",
    "Constants/Inductives relying on unsafe (co)fixpoints:",
    "Inductives whose positivity is assumed:",
)


def _coqchk_unsafe(summary: str) -> tuple[str, ...] | None:
    """Names under coqchk's unsafe headings (``-o`` summary); None if a heading is missing."""
    found: list[str] = []
    for heading in _COQCHK_UNSAFE:
        m = re.search(rf"^\* {re.escape(heading)}(.*?)(?=^\* |\Z)", summary, re.MULTILINE | re.DOTALL)
        if m is None:
            return None
        body = m.group(1).split()
        if body != ["<none>"]:
            found.extend(name for name in body if name != "<none>")
    return tuple(found)


def _incomplete(msgs: tuple[ProofMessage, ...]) -> bool:
    return any("incomplete proof" in m.text or "Unfocused" in m.text or "unfinished" in m.text for m in msgs)


def _allowed(axiom: str, allowed: frozenset[str]) -> bool:
    if axiom.split(".", 1)[0] in (_SUB_LIB, "Submission") or axiom.startswith("unsafe:"):
        return False
    return axiom in allowed or any(axiom.endswith("." + a) or a.endswith("." + axiom) for a in allowed)
