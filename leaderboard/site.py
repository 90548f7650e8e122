"""The static site: ``index.html``, ``env/<id>.html`` per environment, ``run/<entry>.html`` per run.

Pages are plain HTML with inline CSS and inline SVG plots: no scripts, no network, and they work
when opened as files. All run content is escaped (see :mod:`leaderboard.html`).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
from pathlib import Path

from hub.env import Rollout
from hub.run import RunDir, Summary
from leaderboard.aggregate import Column, EnvironmentBoard, aggregate, stale_reason
from leaderboard.board import Board, BoardEntry
from leaderboard.html import Safe, join, link, page, table, tag
from leaderboard.plots import Series, pass_at_k_plot, pass_rate_histogram, scores_plot

__all__ = ["DEFAULT_SAMPLE", "build_site", "env_page_name"]

DEFAULT_SAMPLE = 20
_MAX_TASK_ROWS = 500
_MAX_LINES = 8  # runs drawn in the pass@k and histogram plots (all runs are in the scores plot)


def build_site(board: Board, out: str | os.PathLike[str], *, sample: int = DEFAULT_SAMPLE) -> list[Path]:
    """Write the site for ``board`` into ``out``; returns the pages written.

    Refuses a board whose stored files changed after they were added (:meth:`Board.require_sound_entries`).
    """
    entries = board.require_sound_entries()
    root = Path(out)
    (root / "env").mkdir(parents=True, exist_ok=True)
    (root / "run").mkdir(parents=True, exist_ok=True)
    summaries = {e.id: board.load_summary(e) for e in entries}
    envs = aggregate(entries)
    written: list[Path] = []

    def write(rel: str, text: str) -> None:
        path = root / rel
        path.write_text(text, encoding="utf-8")
        written.append(path)

    write("index.html", _index_page(envs))
    for env in envs:
        write(f"env/{env_page_name(env.env_id)}", _env_page(env, summaries))
    for e in entries:
        write(f"run/{e.id}.html", _run_page(board, e, summaries[e.id], sample=sample))
    return written


def env_page_name(env_id: str) -> str:
    """File name of an environment's page; distinct ids always get distinct names."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", env_id).strip("-.")[:60] or "env"
    if slug != env_id:
        slug += "-" + hashlib.sha256(env_id.encode()).hexdigest()[:8]
    return f"{slug}.html"


# -- formatting ----------------------------------------------------------------------------------
def _f(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "–" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def _date(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, tz=_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _best_k(entry: BoardEntry) -> str:
    if not entry.pass_at_k:
        return "–"
    k = max(entry.pass_at_k, key=int)
    return f"{entry.pass_at_k[k]:.3f} (k={k})"


def _stale_badge(col: Column, env: EnvironmentBoard) -> Safe:
    if not col.stale:
        return Safe("")
    return tag("span", f"stale: {stale_reason(col, env)}", class_="stale")


# -- pages ---------------------------------------------------------------------------------------
def _index_page(envs: list[EnvironmentBoard]) -> str:
    rows = []
    for env in envs:
        col = env.current
        best = col.rows[0]
        rows.append(
            [
                link(f"env/{env_page_name(env.env_id)}", env.env_id),
                col.label,
                len(col.rows),
                link(f"run/{best.id}.html", best.model),
                _f(best.mean_reward),
                _ci(best.ci95),
                env.n_runs - len(col.rows),
            ]
        )
    body = join(
        [
            tag(
                "p",
                "Every number below was recomputed from the saved rollouts when the run was added. "
                "Columns never mix environment versions; runs of older versions are kept as stale.",
            ),
            table(
                ["environment", "version", "runs", "best model", "mean reward", "95% CI", "stale runs"],
                rows,
                numeric=(2, 4, 6),
            ),
        ]
    )
    return page("Leaderboard", body, root="")


def _labels(col: Column) -> dict[str, str]:
    """Row labels: the model name, with a short run id where one model appears twice."""
    counts: dict[str, int] = {}
    for e in col.rows:
        counts[e.model] = counts.get(e.model, 0) + 1
    return {e.id: e.model if counts[e.model] == 1 else f"{e.model} [{e.id[-6:]}]" for e in col.rows}


def _sampling(e: BoardEntry) -> str:
    shown = [f"{k}={v}" for k, v in e.sampling.items() if v is not None]
    return ", ".join(shown) or "server defaults"


def _series(col: Column, summaries: dict[str, Summary]) -> list[Series]:
    labels = _labels(col)
    out = []
    for e in col.rows:
        rates = tuple(t.pass_rate for t in summaries[e.id].per_task if t.pass_rate is not None)
        out.append(
            Series(
                label=labels[e.id],
                mean=e.mean_reward,
                ci95=e.ci95,
                pass_at_k=e.pass_at_k,
                task_pass_rates=rates,
            )
        )
    return out


def _env_page(env: EnvironmentBoard, summaries: dict[str, Summary]) -> str:
    parts: list[object] = []
    for ci, col in enumerate(env.columns):
        labels = _labels(col)
        rows = [
            [
                rank,
                link(f"../run/{e.id}.html", labels[e.id]),
                _f(e.mean_reward),
                _ci(e.ci95),
                _f(e.pass_at_k.get("1")),
                _best_k(e),
                e.n_errors,
                f"{e.n_tasks} x {e.rollouts_per_task} ({e.split}, seed {e.seed})",
                _sampling(e),
                e.usage.get("total_tokens", 0),
                "–" if e.cost_usd is None else f"${e.cost_usd:.4f}",
                tag("code", e.env_hash.removeprefix("sha256:")[:12]),
                _date(e.created_at)[:10],
            ]
            for rank, e in enumerate(col.rows, 1)
        ]
        series = _series(col, summaries)
        top = f", top {_MAX_LINES} runs" if len(series) > _MAX_LINES else ""
        salt = f"{env.env_id}-{ci}"
        plots = tag(
            "div",
            tag(
                "figure",
                tag("figcaption", "Mean reward, 95% bootstrap interval"),
                tag("div", Safe(scores_plot(series, salt=salt + "-s")), class_="plot"),
            ),
            tag(
                "figure",
                tag("figcaption", "pass@k" + top),
                tag("div", Safe(pass_at_k_plot(series[:_MAX_LINES], salt=salt + "-k")), class_="plot"),
            ),
            tag(
                "figure",
                tag("figcaption", "Per-task difficulty (pass-rate histogram)" + top),
                tag("div", Safe(pass_rate_histogram(series[:_MAX_LINES], salt=salt + "-h")), class_="plot"),
            ),
            class_="plots",
        )
        note = (
            tag(
                "p",
                f"Note: version {col.env_version} was run with more than one package content; "
                f"this column holds the runs of hash {col.env_hash}.",
            )
            if col.shares_version
            else ""
        )
        parts.append(
            tag(
                "section",
                tag("h2", f"version {col.label} ", _stale_badge(col, env)),
                note,
                table(
                    [
                        "#",
                        "model",
                        "mean reward",
                        "95% CI",
                        "pass@1",
                        "pass@k",
                        "errors",
                        "tasks x rollouts",
                        "sampling",
                        "tokens",
                        "cost",
                        "env hash",
                        "run date",
                    ],
                    rows,
                    numeric=(0, 2, 4, 6, 9, 10),
                ),
                plots,
                class_="column stale" if col.stale else "column",
                id=f"v{col.env_version}-{ci}"
                if col.shares_version or col.shares_build
                else f"v{col.env_version}",
            )
        )
    return page(f"Environment {env.env_id}", join(parts), root="../")


def _run_page(board: Board, e: BoardEntry, summary: Summary, *, sample: int) -> str:
    config = board.load_config(e)
    provenance = [
        ("environment", f"{e.env_id} {e.env_version}"),
        ("environment hash", tag("code", e.env_hash)),
        ("environment args", tag("code", json.dumps(config.env_args, sort_keys=True))),
        ("model", e.model),
        ("base URL", e.base_url or "–"),
        ("sampling", tag("code", ", ".join(f"{k}={v}" for k, v in e.sampling.items()))),
        ("seed", e.seed),
        ("split", e.split),
        ("tasks x rollouts", f"{e.n_tasks} x {e.rollouts_per_task}"),
        (
            "task set",
            "re-derived from the installed environment and matched"
            if e.tasks_checked
            else "as listed by the run (not re-derived)",
        ),
        ("max turns", config.max_turns),
        ("verihub version", e.verihub_version),
        ("run started", _date(e.created_at)),
        ("added to board", _date(e.added_at)),
        ("tokens", ", ".join(f"{k} {v}" for k, v in e.usage.items())),
        (
            "cost",
            "unknown" if e.cost_usd is None else f"${e.cost_usd:.4f} (from {e.cost_basis or 'rollouts'})",
        ),
        ("rollouts", "copied to the board" if e.rollouts_copied else f"kept at {e.source}"),
        *((f"sha256 {k}", tag("code", v)) for k, v in sorted(e.sha256.items())),
    ]
    metrics = [
        ("mean reward", _f(e.mean_reward)),
        (
            "95% CI (bootstrap over tasks)",
            f"{_ci(e.ci95)} ({e.bootstrap_resamples} resamples, seed {e.bootstrap_seed})",
        ),
        *((f"pass@{k}", _f(v)) for k, v in e.pass_at_k.items()),
        *((f"pass^{k}", _f(v)) for k, v in e.pass_all_k.items()),
        (
            "errors",
            f"{e.n_errors} of {e.n_rollouts}"
            + (
                " (" + ", ".join(f"{k}: {v}" for k, v in summary.errors_by_kind.items()) + ")"
                if summary.errors_by_kind
                else ""
            ),
        ),
    ]
    tasks = [
        [
            t.task_id,
            t.n,
            t.n_passed,
            # not recorded (an older summary): the default 0 was never checked against the rollouts
            t.n_errors if "n_errors" in t.model_fields_set else "–",
            _f(t.pass_rate),
            _f(t.mean_reward),
        ]
        for t in summary.per_task[:_MAX_TASK_ROWS]
    ]
    body = join(
        [
            tag("p", link(f"../env/{env_page_name(e.env_id)}", f"← all runs of {e.env_id}")),
            tag("h2", "Configuration and provenance"),
            table(["field", "value"], provenance),
            tag("h2", "Scores"),
            table(["metric", "value"], metrics),
            tag("h2", "Transcripts (sample)"),
            _transcripts(board, e, summary, sample=sample),
            tag("h2", "Per-task results"),
            table(
                ["task", "graded", "passed", "errors", "pass rate", "mean reward"],
                tasks,
                numeric=(1, 2, 3, 4, 5),
            ),
        ]
    )
    return page(f"{e.model} on {e.env_id} {e.env_version}", body, root="../")


def _transcripts(board: Board, e: BoardEntry, summary: Summary, *, sample: int) -> Safe:
    path = board.rollouts_path(e)
    if path is None:
        return tag(
            "p",
            "The rollouts are not available (not copied to the board, and the original run "
            "directory is gone or changed). Add runs with --copy-rollouts to keep transcripts.",
        )
    wanted = {(t.task_id, 0) for t in summary.per_task[:sample]}
    found: dict[tuple[str, int], Rollout] = {}
    for r in RunDir(path.parent).iter_rollouts():
        if (r.task_id, r.rollout_index) in wanted:
            found[(r.task_id, r.rollout_index)] = r
    order = [(t.task_id, 0) for t in summary.per_task[:sample] if (t.task_id, 0) in found]
    intro = tag("p", f"First rollout of the first {len(order)} of {summary.n_tasks} tasks.")
    return join([intro, *(_transcript(found[k]) for k in order)])


def _transcript(r: Rollout) -> Safe:
    if r.error is not None:
        verdict, cls = f"error ({r.error.kind}): {r.error.message}", "err"
    elif r.passed:
        verdict, cls = f"passed, reward {_f(r.reward)}", "pass"
    else:
        verdict, cls = f"failed, reward {_f(r.reward)}", "fail"
    head = tag(
        "summary", tag("code", f"{r.task_id} #{r.rollout_index}"), " ", tag("span", verdict, class_=cls)
    )
    msgs = [join([tag("div", tag("strong", m.role)), tag("pre", m.content or "")]) for m in r.messages]
    grade: list[object] = []
    if r.grade is not None:
        g = r.grade
        grade_rows: list[list[object]] = [
            ["status", g.status],
            ["score", _f(g.score)],
            ["passed", g.passed],
            ["extracted", "–" if g.extracted is None else g.extracted],
            ["reason", g.reason or "–"],
        ]
        grade_rows += [[f"check {c.name}", f"{c.model_dump_json()}"] for c in g.checks]
        grade = [tag("h4", "Grade"), table(["field", "value"], grade_rows)]
    return tag("details", head, *msgs, *grade)
