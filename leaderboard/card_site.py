"""The eval card pages of the static site: ``card/<id>-<version>-<hash8>.html`` and, beside each,
every row's band export: ``calibration.json`` (always) and ``learnable.jsonl`` (with
``band_tasks``, when the environment version the run used is installed, same content hash).
"""

from __future__ import annotations

import hashlib
import re

from leaderboard.board import Board
from leaderboard.card import EvalCard, ModelResult, band_export
from leaderboard.html import join, link, page, tag
from leaderboard.render import FRAGMENT_CSS, render_card
from leaderboard.tasks import run_tasks

__all__ = ["CardFiles", "card_files", "card_page", "card_page_name"]

CardFiles = dict[str, str]
"""File name (beside the card page) -> contents."""


def card_page_name(env_id: str, env_version: str) -> str:
    """File name of the eval card of one environment version (distinct pairs, distinct names)."""
    key = f"{env_id}\n{env_version}"
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{env_id}-{env_version}").strip("-.")[:60] or "card"
    return f"{slug}-{hashlib.sha256(key.encode()).hexdigest()[:8]}.html"


def card_files(
    board: Board, card: EvalCard, *, stem: str, band_tasks: bool = False
) -> tuple[CardFiles, dict[str, list[tuple[str, str]]], list[str]]:
    """The band-export files of every row of ``card``, the download links per row (by its first
    entry id), and notes
    on exports that could not be made (tasks not installed)."""
    files: CardFiles = {}
    links: dict[str, list[tuple[str, str]]] = {}
    notes: list[str] = []
    entries = {e.id: e for e in board.entries()}
    for n, m in enumerate(card.models):
        name = f"{stem}-{n}.calibration.json"
        files[name] = m.calibration.model_dump_json(indent=2)
        links[m.entry_ids[0]] = [("calibration.json", name)]
        if not band_tasks:
            continue
        tasks = run_tasks(board.load_config(entries[m.entry_ids[0]]))
        if isinstance(tasks, str):
            notes.append(f"{m.name}: no learnable.jsonl ({tasks})")
            continue
        jsonl = f"{stem}-{n}.learnable.jsonl"
        files[jsonl] = band_export(m, tasks)
        links[m.entry_ids[0]].append(("learnable.jsonl", jsonl))
    return files, links, notes


def card_page(
    card: EvalCard,
    *,
    env_page: str,
    stem: str,
    links: dict[str, list[tuple[str, str]]],
    notes: list[str],
) -> str:
    """The standalone card page; ``env_page`` is the relative link back to the rankings."""

    def export_href(m: ModelResult) -> list[tuple[str, str]]:
        return links.get(m.entry_ids[0], [])

    body = join(
        [
            tag("p", link(env_page, f"← rankings of {card.env_id}")),
            render_card(card, run_href=lambda i: f"../run/{i}.html", export_href=export_href, salt=stem),
            *(tag("p", note, class_="note") for note in notes),
        ]
    )
    return page(f"Eval card: {card.env_id} {card.env_version}", body, root="../", css=FRAGMENT_CSS)
