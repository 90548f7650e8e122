"""The static site: ``index.html``, ``env/<id>.html`` per environment (its rankings),
``card/<id>-<version>.html`` per environment version (its eval card, with each row's
``calibration.json``), ``run/<entry>.html`` per run.

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
from leaderboard.aggregate import EnvironmentBoard, aggregate
from leaderboard.board import Board, BoardEntry
from leaderboard.card import eval_card
from leaderboard.card_site import card_files, card_page, card_page_name
from leaderboard.cross import cross_environment, render_cross
from leaderboard.env_view import render_environment
from leaderboard.html import Safe, join, link, page, table, tag
from leaderboard.infra import DEFAULT_INFRA_THRESHOLD, infra_check
from leaderboard.ranking import rank
from leaderboard.render import FRAGMENT_CSS
from leaderboard.settings import sampling_text

__all__ = ["DEFAULT_SAMPLE", "build_site", "card_page_name", "env_page_name"]

DEFAULT_SAMPLE = 20
_MAX_TASK_ROWS = 500


def build_site(
    board: Board,
    out: str | os.PathLike[str],
    *,
    sample: int = DEFAULT_SAMPLE,
    infra_threshold: float = DEFAULT_INFRA_THRESHOLD,
    band_tasks: bool = False,
) -> list[Path]:
    """Write the site for ``board`` into ``out``; returns the pages written.

    Refuses a board whose stored files changed after they were added (:meth:`Board.require_sound_entries`).
    Runs whose errored share of rollouts exceeds ``infra_threshold`` are flagged. With
    ``band_tasks`` the eval cards also offer ``learnable.jsonl`` (loads the installed environments).
    """
    entries = board.require_sound_entries()
    root = Path(out)
    for folder in ("env", "run", "card"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    summaries = {e.id: board.load_summary(e) for e in entries}
    envs = aggregate(entries)
    written: list[Path] = []

    def write(rel: str, text: str) -> None:
        path = root / rel
        path.write_text(text, encoding="utf-8")
        if path.suffix == ".html":
            written.append(path)

    write("index.html", _index_page(envs, entries, infra_threshold))
    for env in envs:
        view = render_environment(
            env,
            summaries,
            run_href=lambda i: f"../run/{i}.html",
            card_href=lambda eid, v: f"../card/{card_page_name(eid, v)}",
            infra_threshold=infra_threshold,
        )
        write(
            f"env/{env_page_name(env.env_id)}",
            page(f"Environment {env.env_id}", view, root="../", css=FRAGMENT_CSS),
        )
        for version in dict.fromkeys(c.env_version for c in env.columns):
            name = card_page_name(env.env_id, version)
            card = eval_card(
                [(e, summaries[e.id]) for e in entries],
                env_id=env.env_id,
                env_version=version,
                infra_threshold=infra_threshold,
            )
            stem = name.removesuffix(".html")
            files, links, notes = card_files(board, card, stem=stem, band_tasks=band_tasks)
            for file_name, text in files.items():
                write(f"card/{file_name}", text)
            env_link = f"../env/{env_page_name(env.env_id)}"
            write(f"card/{name}", card_page(card, env_page=env_link, stem=stem, links=links, notes=notes))
    for e in entries:
        write(
            f"run/{e.id}.html",
            _run_page(board, e, summaries[e.id], sample=sample, infra_threshold=infra_threshold),
        )
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


def _index_page(envs: list[EnvironmentBoard], entries: list[BoardEntry], infra_threshold: float) -> str:
    rows = []
    for env in envs:
        col = env.current
        top = rank(col.rows).rows[0]
        best = top.entry
        ties = sum(1 for r in rank(col.rows).rows if r.tied and r.rank == top.rank) - 1
        rows.append(
            [
                link(f"env/{env_page_name(env.env_id)}", env.env_id),
                col.label,
                len(col.rows),
                join(
                    [
                        link(f"run/{best.id}.html", top.name),
                        tag("span", f" (tied with {ties})", class_="tie") if ties > 0 else "",
                    ]
                ),
                _f(best.mean_reward),
                _ci(best.ci95),
                env.n_runs - len(col.rows),
                link(f"card/{card_page_name(env.env_id, col.env_version)}", "eval card"),
            ]
        )
    body = join(
        [
            tag(
                "p",
                "Every number below was recomputed from the saved rollouts when the run was added. "
                "Rankings never mix environment versions or settings; runs whose 95% intervals overlap "
                "are tied; runs of older versions are kept as stale.",
            ),
            table(
                [
                    "environment",
                    "version",
                    "runs",
                    "leader",
                    "mean reward",
                    "95% CI",
                    "stale runs",
                    "card",
                ],
                rows,
                numeric=(2, 4, 6),
            ),
        ]
    )
    if len(envs) > 1:
        cross = cross_environment(entries, infra_threshold=infra_threshold)
        body = join(
            [
                body,
                tag("h2", "Models across environments"),
                render_cross(
                    cross, env_href=lambda i: f"env/{env_page_name(i)}", run_href=lambda i: f"run/{i}.html"
                ),
            ]
        )
    return page("Leaderboard", body, root="", css=FRAGMENT_CSS)


def _infra(e: BoardEntry, threshold: float) -> Safe:
    check = infra_check(e, threshold=threshold)
    return tag("span", check.describe(), class_="flag") if check.flagged else join([check.describe()])


def _run_page(board: Board, e: BoardEntry, summary: Summary, *, sample: int, infra_threshold: float) -> str:
    config = board.load_config(e)
    provenance = [
        ("environment", f"{e.env_id} {e.env_version}"),
        ("environment hash", tag("code", e.env_hash)),
        ("environment args", tag("code", json.dumps(config.env_args, sort_keys=True))),
        ("model", e.model),
        ("label", e.label or "–"),
        ("owner", e.owner or "–"),
        ("base URL", e.base_url or "–"),
        ("sampling", tag("code", sampling_text(e.sampling))),
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
        ("infrastructure errors", _infra(e, infra_threshold)),
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
    return page(f"{e.label or e.model} on {e.env_id} {e.env_version}", body, root="../", css=FRAGMENT_CSS)


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
