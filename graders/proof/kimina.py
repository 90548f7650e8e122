"""Client for a Kimina-compatible Lean server (``POST /api/check``), for Lean on a cluster.

Request: ``{"snippets": [{"id", "code"}], "timeout", "debug", "reuse"}``; answer:
``{"results": [{"id", "time", "error", "response"}]}`` where ``response`` is the REPL's answer.
The snippet is the file of :mod:`graders.proof.lean_check` (import header, the statement
elaborated ahead, the screened proof, the re-check and its ``#print axioms``); the axioms answer
counts only if it sits exactly at the position of that last command.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

from graders.proof.lean import prepare_lean
from graders.proof.lean_check import FileLayout, judge_file_answer, plan_recheck
from graders.proof.policy import ProofPolicy
from graders.proof.verdict import ProofVerdict

if TYPE_CHECKING:
    import aiohttp

__all__ = ["KiminaChecker"]


class KiminaChecker:
    """Checks Lean proofs on a Kimina Lean server at ``url`` (for example ``http://host:8000``)."""

    language = "lean"

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        policy: ProofPolicy | None = None,
        session: aiohttp.ClientSession | None = None,
    ) -> None:
        self.url = url.rstrip("/") + "/api/check"
        self.api_key = api_key
        self.policy = policy or ProofPolicy()
        self._session = session
        self._own_session = session is None

    async def aclose(self) -> None:
        if self._session is not None and self._own_session:
            await self._session.close()
            self._session = None

    def _client(self) -> aiohttp.ClientSession:
        import aiohttp  # imported on first use: it is slow to import

        if self._session is None:
            self._session = aiohttp.ClientSession()
        return self._session

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
        start = time.monotonic()
        prepared = prepare_lean(statement, proof, imports, pol)
        if isinstance(prepared, ProofVerdict):
            return prepared
        limit = timeout or pol.timeout_s
        plan = plan_recheck(prepared.statement, max_heartbeats=pol.max_heartbeats)
        layout = FileLayout.build(tuple(imports), prepared.source, plan)
        code = layout.text
        body = {
            "snippets": [{"id": uuid.uuid4().hex, "code": code}],
            "timeout": max(1, int(limit)),
            "debug": False,
            "reuse": True,
        }
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        import aiohttp

        try:
            async with self._client().post(
                self.url, json=body, headers=headers, timeout=aiohttp.ClientTimeout(total=limit + 10)
            ) as resp:
                if resp.status != 200:
                    text = (await resp.text())[:300]
                    return ProofVerdict.error(
                        f"Kimina server answered HTTP {resp.status}: {text}", backend="kimina"
                    )
                data: Any = await resp.json()
        except (aiohttp.ClientError, TimeoutError) as exc:
            return ProofVerdict.error(f"Kimina server unreachable at {self.url}: {exc!r}", backend="kimina")
        try:
            result = data["results"][0]
        except (KeyError, IndexError, TypeError):
            return ProofVerdict.error(f"malformed Kimina answer: {str(data)[:300]}", backend="kimina")
        if result.get("error"):
            err = str(result["error"])
            timed_out = "timed out" in err or "timeout" in err.lower()
            return ProofVerdict(
                status="timeout" if timed_out else "error",
                reason=f"Kimina server: {err[:300]}",
                backend="kimina",
                elapsed_s=time.monotonic() - start,
            )
        answer = result.get("response") or {}
        # Positions are either relative to the whole snippet or, on servers that run the import
        # header apart, to the code after it. The shifted reading is taken only if a message
        # naming the check theorem starts exactly where the `#print axioms` command starts.
        verdict = judge_file_answer(
            answer,
            layout,
            plan,
            allowed_axioms=pol.axioms_for("lean"),
            backend="kimina",
            shifts=(0, layout.header_lines) if layout.header_lines else (0,),
        )
        return ProofVerdict(
            status=verdict.status,
            reason=verdict.reason,
            messages=verdict.messages,
            goals=verdict.goals,
            axioms=verdict.axioms,
            backend="kimina",
            elapsed_s=time.monotonic() - start,
        )
