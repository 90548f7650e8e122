"""``verihub view DIR``: a run as one static HTML page (no server, no network, works from file://).

The page shows the run's configuration and summary, then every rollout (up to ``limit``) with its
verdict, reward, extracted answer, grader reason or error, and the whole transcript; buttons
filter passed, failed and errored rollouts, and a box filters by task id.

Everything in a run is untrusted (a model writes the transcripts, an environment the task ids
and reasons): every value is HTML-escaped, nothing is put inside a ``<script>``, and a Content
Security Policy allows only the page's own inline style and its one inline script (by hash), so
even a missed escape could neither run code nor load anything.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from markupsafe import escape

from hub.env.types import Message, Rollout
from hub.run.metrics import Summary, SummaryBuilder
from hub.run.rundir import RunConfig, RunDir

__all__ = ["VIEW_FILE", "render_run", "write_view"]

VIEW_FILE = "view.html"
MAX_MESSAGE_CHARS = 20_000
"""Longer message texts are cut (the page says how much); rollouts.jsonl keeps them whole."""

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24}
header{background:#fff;border-bottom:1px solid #d0d7de;padding:12px 20px}
h1{font-size:18px;margin:0 0 6px}
.meta{color:#57606a;font-size:13px}
.kv{display:flex;flex-wrap:wrap;gap:6px 18px;margin-top:8px}
.kv span b{color:#57606a;font-weight:500;margin-right:4px}
nav{position:sticky;top:0;background:#fff;border-bottom:1px solid #d0d7de;padding:8px 20px;
display:flex;gap:8px;align-items:center;z-index:1}
nav button{border:1px solid #d0d7de;background:#f6f8fa;border-radius:6px;padding:4px 10px;cursor:pointer}
nav button[aria-pressed=true]{background:#0969da;color:#fff;border-color:#0969da}
nav input{border:1px solid #d0d7de;border-radius:6px;padding:4px 8px;margin-left:8px;width:220px}
#count{color:#57606a;margin-left:auto}
main{padding:12px 20px}
article{background:#fff;border:1px solid #d0d7de;border-left:5px solid #8c959f;border-radius:6px;
margin:0 0 12px;padding:10px 14px}
article.passed{border-left-color:#1a7f37}
article.failed{border-left-color:#cf222e}
article.errored{border-left-color:#9a6700}
article h2{font-size:15px;margin:0 0 6px;display:flex;gap:10px;align-items:baseline}
.badge{font-size:12px;border-radius:10px;padding:1px 8px;color:#fff;background:#8c959f}
.passed .badge{background:#1a7f37}.failed .badge{background:#cf222e}.errored .badge{background:#9a6700}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:6px 0}
dt{color:#57606a}dd{margin:0;white-space:pre-wrap;word-break:break-word}
details{margin-top:6px}
.msg{border-top:1px solid #eaeef2;padding:6px 0}
.role{font-size:12px;font-weight:600;text-transform:uppercase;color:#57606a}
.msg pre{margin:2px 0 0;white-space:pre-wrap;word-break:break-word;font:13px/1.4 ui-monospace,monospace}
.cut{color:#9a6700;font-size:12px}
.hidden{display:none}
"""

_SCRIPT = """
(function(){
var status='all';
var buttons=document.querySelectorAll('nav button');
var box=document.getElementById('task');
var arts=document.querySelectorAll('article');
var count=document.getElementById('count');
function apply(){
var q=box.value.trim().toLowerCase();var shown=0;
for(var i=0;i<arts.length;i++){var a=arts[i];
var ok=(status==='all'||a.dataset.status===status)&&(!q||a.dataset.task.toLowerCase().indexOf(q)>=0);
a.classList.toggle('hidden',!ok);if(ok){shown++;}}
count.textContent=shown+' of '+arts.length+' shown';}
for(var j=0;j<buttons.length;j++){buttons[j].addEventListener('click',function(e){
var b=e.currentTarget;status=b.dataset.filter;
for(var k=0;k<buttons.length;k++){buttons[k].setAttribute('aria-pressed',String(buttons[k]===b));}
apply();});}
box.addEventListener('input',apply);apply();})();
"""


def _csp() -> str:
    digest = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
    return (
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )


def _e(value: object) -> str:
    return str(escape(value))


def _status(r: Rollout) -> str:
    if r.error is not None:
        return "errored"
    return "passed" if r.passed else "failed"


def _message(m: Message) -> str:
    text = m.content or ""
    if m.tool_calls:
        calls = "\n".join(f"→ {c.name}({c.arguments})" for c in m.tool_calls)
        text = f"{text}\n{calls}" if text else calls
    cut = ""
    if len(text) > MAX_MESSAGE_CHARS:
        cut = (
            f'<div class="cut">cut: {len(text) - MAX_MESSAGE_CHARS:,} more characters in rollouts.jsonl</div>'
        )
        text = text[:MAX_MESSAGE_CHARS]
    role = m.role + (f" ({m.name})" if m.name else "")
    return f'<div class="msg"><div class="role">{_e(role)}</div><pre>{_e(text)}</pre>{cut}</div>'


def _rollout(r: Rollout) -> str:
    status = _status(r)
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
    details = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in rows)
    transcript = "".join(_message(m) for m in r.messages)
    return (
        f'<article class="{status}" data-status="{status}" data-task="{_e(r.task_id)}">'
        f'<h2><span class="badge">{status}</span><span>{_e(r.task_id)}</span>'
        f'<span class="meta">rollout {r.rollout_index}</span></h2>'
        f"<dl>{details}</dl>"
        f"<details open><summary>transcript ({len(r.messages)} messages)</summary>{transcript}</details>"
        "</article>"
    )


def render_run(config: RunConfig, summary: Summary, rollouts: Iterable[Rollout], *, limit: int) -> str:
    """The page for one run (``limit``: at most this many rollouts, in file order)."""
    shown: list[str] = []
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
    kv = "".join(f"<span><b>{_e(k)}</b>{_e(v)}</span>" for k, v in facts)
    note = f"{total:,} rollouts" + (f", the first {limit:,} shown" if total > limit else "")
    buttons = "".join(
        f'<button type="button" data-filter="{f}" aria-pressed="{str(f == "all").lower()}">{label}</button>'
        for f, label in (("all", "all"), ("passed", "passed"), ("failed", "failed"), ("errored", "errored"))
    )
    title = f"{config.env_id} @ {config.model}"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_e(_csp())}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>"
        f'<header><h1>{_e(title)}</h1><div class="meta">{_e(note)}</div>'
        f'<div class="kv">{kv}</div></header>'
        f'<nav>{buttons}<input id="task" type="search" placeholder="filter by task id" aria-label="task id">'
        '<span id="count"></span></nav>'
        f"<main>{''.join(shown)}</main>"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )


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
