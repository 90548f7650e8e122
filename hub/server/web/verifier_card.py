"""A version's verifier card as pages and the API show it.

The card is what the hub's review measured on the version's label file (stored as JSON on the
version by the review queue); :func:`card_view` turns it into the few figures a page shows, and
:func:`card_json` into the API's form. A version without a card, or with one that does not read
as a card, is "error rate not measured": nothing else is ever shown as its error rate.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

__all__ = ["NOT_MEASURED", "CardView", "RateView", "card_json", "card_view"]

NOT_MEASURED = "error rate not measured"
"""What a version without a hub-measured card says."""


@dataclass(frozen=True)
class RateView:
    """``k`` of ``n`` as a percentage with its 95% interval, ready to print."""

    k: int
    n: int
    percent: str
    interval: str

    @property
    def text(self) -> str:
        return f"{self.percent} [{self.interval}] ({self.k}/{self.n})" if self.n else "- (0 of 0)"


@dataclass(frozen=True)
class CardView:
    """The figures of a verifier card."""

    n: int
    accuracy: RateView
    false_positive_rate: RateView
    false_negative_rate: RateView
    labels: str
    labels_sha256: str
    grader_failed: int
    errors: int
    env_version: str


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _fraction(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok and 0.0 <= value <= 1.0 else None


def _rate(raw: Any) -> RateView | None:
    if not isinstance(raw, dict):
        return None
    k, n = _count(raw.get("k")), _count(raw.get("n"))
    ci = raw.get("ci95")
    if k is None or n is None or k > n or not isinstance(ci, (list, tuple)) or len(ci) != 2:
        return None
    low, high = _fraction(ci[0]), _fraction(ci[1])
    if low is None or high is None:
        return None
    percent = f"{100 * k / n:.2f}%" if n else "-"
    return RateView(k=k, n=n, percent=percent, interval=f"{100 * low:.2f}, {100 * high:.2f}")


def _text(value: Any, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


def card_view(stored: str | None) -> CardView | None:
    """The card stored on a version, or None when it has none (or it does not read as one)."""
    if not stored:
        return None
    try:
        raw = json.loads(stored)
    except ValueError:
        return None
    if not isinstance(raw, dict):
        return None
    rates = [_rate(raw.get(k)) for k in ("accuracy", "false_positive_rate", "false_negative_rate")]
    n, failed, errors = (_count(raw.get(k)) for k in ("n", "grader_failed", "errors"))
    accuracy, fpr, fnr = rates
    if accuracy is None or fpr is None or fnr is None or n is None or failed is None or errors is None:
        return None
    return CardView(
        n=n,
        accuracy=accuracy,
        false_positive_rate=fpr,
        false_negative_rate=fnr,
        labels=_text(raw.get("labels"), 200),
        labels_sha256=_text(raw.get("labels_sha256"), 64),
        grader_failed=failed,
        errors=errors,
        env_version=_text(raw.get("env_version"), 100),
    )


def card_json(stored: str | None) -> dict[str, Any] | None:
    """The card for the API: the figures, each rate as ``k``, ``n``, ``value`` and ``ci95``, or
    None when the version has no card."""
    view = card_view(stored)
    if view is None:
        return None
    raw = json.loads(stored or "")

    def rate(name: str) -> dict[str, Any]:
        r = raw[name]
        value = r["k"] / r["n"] if r["n"] else None
        return {"k": r["k"], "n": r["n"], "value": value, "ci95": list(r["ci95"])}

    return {
        "measured_by": "hub review",
        "n": view.n,
        "accuracy": rate("accuracy"),
        "false_positive_rate": rate("false_positive_rate"),
        "false_negative_rate": rate("false_negative_rate"),
        "grader_failed": view.grader_failed,
        "errors": view.errors,
        "labels": view.labels,
        "labels_sha256": view.labels_sha256,
    }
