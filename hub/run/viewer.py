"""``verihub view DIR``: a run as one static HTML page (no server, no network, works from file://).

The page shows the run's configuration and summary, then every rollout (up to ``limit``) with its
verdict, reward, extracted answer, grader reason or error, and the whole transcript; buttons
filter passed, failed and errored rollouts, and a box filters by task id.

Everything in a run is untrusted (a model writes the transcripts, an environment the task ids
and reasons): the page is a Jinja2 template (``templates/view.html``) with autoescaping, so every
value is HTML-escaped; nothing is put inside a ``<script>``, and a Content
Security Policy allows only the page's own inline style and its one inline script (by hash), so
even a missed escape could neither run code nor load anything.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from hub.env import Message, Rollout
from hub.run.metrics import Summary, SummaryBuilder
from hub.run.rundir import RunConfig, RunDir

__all__ = ["VIEW_FILE", "render_run", "write_view"]

VIEW_FILE = "view.html"
MAX_MESSAGE_CHARS = 20_000
"""Longer message texts are cut (the page says how much); rollouts.jsonl keeps them whole."""

_FILTERS = (("all", "all"), ("passed", "passed"), ("failed", "failed"), ("errored", "errored"))


@functools.lru_cache(maxsize=1)
def _templates() -> jinja2.Environment:
    """The viewer's templates (``hub/run/templates``), every value autoescaped."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("hub.run", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )


def _asset(env: jinja2.Environment, name: str) -> str:
    """A file of the package's own (the page's style or script), inserted verbatim."""
    assert env.loader is not None
    source, _, _ = env.loader.get_source(env, name)
    return source


def _csp(script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    return (
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )


def _status(r: Rollout) -> str:
    if r.error is not None:
        return "errored"
    return "passed" if r.passed else "failed"


def _message(m: Message) -> dict[str, Any]:
    text = m.content or ""
    if m.tool_calls:
        calls = "\n".join(f"→ {c.name}({c.arguments})" for c in m.tool_calls)
        text = f"{text}\n{calls}" if text else calls
    cut = max(0, len(text) - MAX_MESSAGE_CHARS)
    role = m.role + (f" ({m.name})" if m.name else "")
    return {"role": role, "text": text[:MAX_MESSAGE_CHARS], "cut": cut}


def _rollout(r: Rollout) -> dict[str, Any]:
    rows: list[tuple[str, str]] = []
    rows.append(("reward", "-" if r.reward is None else f"{r.reward:.4g}"))
    if r.grade is not None:
        rows.append(("grade", r.grade.status))
        if r.grade.extracted is not None:
            rows.append(("extracted answer", r.grade.extracted))
        if r.grade.reason:
            rows.append(("reason", r.grade.reason))
        for check in r.grade.checks:
            mark = "✓" if check.passed else "✗"
            rows.append((f"check {check.name}", f"{mark} {check.reason}".strip()))
    if r.error is not None:
        rows.append((f"{r.error.kind} error", r.error.message))
    attempts = r.extra.get("failed_attempts")
    if isinstance(attempts, list) and attempts:
        rows.append(("earlier attempts", f"{len(attempts)} failed (see failed_attempts.jsonl)"))
    rows.append(("turns", f"{r.turns}{' (truncated)' if r.truncated else ''}"))
    rows.append(
        ("time", f"{r.timing.total_s:.2f}s (model {r.timing.model_s:.2f}s, grade {r.timing.grade_s:.2f}s)")
    )
    return {
        "status": _status(r),
        "task_id": r.task_id,
        "index": r.rollout_index,
        "rows": rows,
        "messages": [_message(m) for m in r.messages],
    }


def render_run(config: RunConfig, summary: Summary, rollouts: Iterable[Rollout], *, limit: int) -> str:
    """The page for one run (``limit``: at most this many rollouts, in file order)."""
    shown: list[dict[str, Any]] = []
    total = 0
    for r in rollouts:
        total += 1
        if len(shown) < limit:
            shown.append(_rollout(r))
    mean = "-" if summary.mean_reward is None else f"{summary.mean_reward:.4f}"
    facts = [
        ("environment", f"{config.env_id} {config.env_version}"),
        ("model", config.model),
        ("split", config.split),
        ("tasks x rollouts", f"{summary.n_tasks} x {summary.rollouts_per_task}"),
        ("recorded", str(summary.n_rollouts)),
        ("errors", str(summary.n_errors)),
        *((("grader failures", str(summary.grader_failures)),) if summary.grader_failures else ()),
        ("mean reward", mean),
        *((f"pass@{k}", f"{v:.4f}") for k, v in summary.pass_at_k.items()),
        *((name, f"{v:.4f}") for name, v in summary.metrics.items()),
    ]
    if config.env_args:
        facts.append(("env args", json.dumps(config.env_args, sort_keys=True)))
    env = _templates()
    script = _asset(env, "view.js")
    page = env.get_template("view.html").render(
        title=f"{config.env_id} @ {config.model}",
        note=f"{total:,} rollouts" + (f", the first {limit:,} shown" if total > limit else ""),
        facts=facts,
        filters=_FILTERS,
        rollouts=shown,
        csp=_csp(script),
        style=Markup(_asset(env, "view.css")),
        script=Markup(script),
    )
    return page + "\n"


def write_view(
    run_dir: str | os.PathLike[str], *, out: str | os.PathLike[str] | None = None, limit: int = 2000
) -> Path:
    """Write the run's page (default ``DIR/view.html``) and return its path. Read-only on the run:
    safe while it is being written (the summary is then rebuilt from what is saved)."""
    rd = RunDir(run_dir)
    config = rd.load_config()
    if rd.summary_path.exists() and rd.writer_holder() is None:
        summary = rd.load_summary()
    else:
        builder = SummaryBuilder(
            env_id=config.env_id,
            env_version=config.env_version,
            model=config.model,
            rollouts_per_task=config.rollouts_per_task,
        )
        summary = builder.extend(rd.iter_rollouts()).build()
    page = render_run(config, summary, rd.iter_rollouts(), limit=limit)
    target = Path(out) if out is not None else rd.path / VIEW_FILE
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(page, encoding="utf-8")
    os.replace(tmp, target)
    return target
