"""The only variables a child process that runs package code inherits from the hub: the review
and re-verification children of the worker, the hub's evaluations, the grading of corrections.
Nothing of the hub's own settings (database URL, data folder, tokens) is among them."""

from __future__ import annotations

__all__ = ["CHILD_ENV"]

CHILD_ENV = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "PYTHONPATH",
    "VERIHUB_SHARED_DATA",
    "VERIHUB_EVENT_LOOP",
    "HF_HUB_OFFLINE",
    "HF_DATASETS_OFFLINE",
)
