"""One configuration model: every ``VERIHUB_*`` name the code reads is declared in
:class:`hub.env.settings.Settings` (or is internal), values are typed, and the reference table in
docs/configuration.md is the model's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hub.env.settings import INTERNAL, PREFIX, Settings, markdown_table, settings

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"VERIHUB_[A-Z0-9_]*[A-Z0-9]")


def _names_in_source() -> set[str]:
    found: set[str] = set()
    for top in ("hub", "graders", "leaderboard", "environments"):
        for path in (ROOT / top).rglob("*.py"):
            if "tests" in path.parts:
                continue
            found |= set(NAME.findall(path.read_text(encoding="utf-8")))
    return found


def test_every_variable_the_code_names_is_declared() -> None:
    declared = {PREFIX + name.upper() for name in Settings.model_fields} | INTERNAL
    undeclared = sorted(_names_in_source() - declared)
    assert not undeclared, f"declare these in hub/env/settings.py: {undeclared}"


def test_the_docs_table_is_the_model() -> None:
    doc = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert markdown_table() in doc, "regenerate it: python -m hub.env.settings"


def test_values_are_typed_and_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIHUB_HUB_LEASE_S", "12.5")
    monkeypatch.setenv("VERIHUB_HUB_REVIEW_FAST", "1")
    got = settings()
    assert got.hub_lease_s == 12.5 and got.hub_review_fast is True
    monkeypatch.setenv("VERIHUB_HUB_LEASE_S", "0")
    with pytest.raises(ValueError, match="hub_lease_s"):
        settings()
    monkeypatch.setenv("VERIHUB_HUB_LEASE_S", "60")
    monkeypatch.setenv("VERIHUB_EVENT_LOOP", "trio")
    with pytest.raises(ValueError, match="event_loop"):
        settings()
