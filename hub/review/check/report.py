"""The check report: named checks with pass/fail/warn/skip and reasons, as text or JSON."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from hub.review.fidelity import FidelityReport
from hub.sandbox import MAX_DETAIL, MAX_REASON, clean, host_secrets

__all__ = ["CHECK_NAMES", "CheckReport", "CheckResult", "CheckStatus"]

CheckStatus = Literal["pass", "fail", "warn", "skip"]

CHECK_NAMES: dict[str, str] = {
    "installs": "the package installs (pip, no network, no dependencies)",
    "loads": "load_environment() returns a verihub Environment",
    "metadata": "name, version, summary and entry point are declared",
    "readme": "README covers task, data source, licence, grader and expected scores",
    "licence": "a licence is stated",
    "data_source": "the data source is named",
    "task_ids": "task ids are unique and stable across two loads (two processes)",
    "determinism": "tasks are the same for the same seed",
    "gold": "every reference answer passes its grader",
    "perturbed_gold": "a perturbed reference answer fails",
    "hacking_probes": "reward-hacking probes fail on every sampled task",
    "stateful_probes": "stateful tasks fail on no action, an answer alone, another task's actions",
    "grading_time": "grading finishes within the time limit",
    "grader_errors": "the grader never crashes on gold, perturbed or hostile input",
    "file_access": "no file is read outside the package and the run directory",
    "network": "no network access is attempted",
    "sandbox": "the check itself ran to completion within its limits",
    "verifier_card": "the packaged label file's error rates, measured with the grader (optional)",
}


class CheckResult(BaseModel):
    """The outcome of one named check."""

    name: str = Field(description="One of CHECK_NAMES.")
    status: CheckStatus
    reason: str = Field(default="", description="Why it failed (or what was checked).")
    details: list[str] = Field(default_factory=list, description="Up to a few concrete examples.")


class CheckReport(BaseModel):
    """What ``verihub check`` found. ``passed`` is True when no check failed."""

    target: str = Field(description="The path or id checked.")
    env_id: str | None = None
    version: str | None = None
    passed: bool = False
    isolation: str = Field(default="", description="How the environment was sandboxed.")
    unsafe: bool = Field(default=False, description="True when the package ran without the sandbox.")
    results: list[CheckResult] = Field(default_factory=list)
    duration_s: float = 0.0
    verifier_card: FidelityReport | None = Field(
        default=None, description="The grader measured on the package's label file, when it ships one."
    )

    def result(self, name: str) -> CheckResult | None:
        return next((r for r in self.results if r.name == name), None)

    def failures(self) -> list[CheckResult]:
        return [r for r in self.results if r.status == "fail"]

    def add(self, name: str, status: CheckStatus, reason: str = "", details: list[str] | None = None) -> None:
        """Record a result; a later result of the same name replaces a pass/skip but never a fail.

        The reason and details often quote the package (its repr, messages, stderr): they are
        capped in length and stripped of this process's secrets (:mod:`hub.sandbox.redact`)."""
        secrets = host_secrets()
        new = CheckResult(
            name=name,
            status=status,
            reason=clean(reason, MAX_REASON, secrets),
            details=[clean(d, MAX_DETAIL, secrets) for d in list(details or [])[:5]],
        )
        for i, old in enumerate(self.results):
            if old.name == name:
                if old.status != "fail":
                    self.results[i] = new
                return
        self.results.append(new)

    def finish(self) -> CheckReport:
        order = list(CHECK_NAMES)
        self.results.sort(key=lambda r: order.index(r.name) if r.name in order else len(order))
        self.passed = not self.failures()
        return self

    def to_text(self) -> str:
        head = f"verihub check {self.target}"
        if self.env_id:
            head += f" ({self.env_id} {self.version or ''})".rstrip()
        lines = [head, f"isolation: {self.isolation}"]
        if self.unsafe:
            lines.insert(0, "UNSAFE: this check ran the package WITHOUT the sandbox (--unsafe-no-sandbox)")
        for r in self.results:
            mark = {"pass": "PASS", "fail": "FAIL", "warn": "WARN", "skip": "SKIP"}[r.status]
            text = f"  {mark}  {r.name}: {r.reason or CHECK_NAMES.get(r.name, '')}"
            lines.append(text)
            lines.extend(f"          - {d}" for d in r.details)
        if self.verifier_card is not None:
            lines.append("verifier card:")
            lines.extend("  " + line for line in self.verifier_card.to_text().splitlines())
        verdict = "PASSED" if self.passed else f"FAILED ({len(self.failures())} checks)"
        lines.append(f"{verdict} in {self.duration_s:.1f}s")
        return "\n".join(lines)
