"""Helpers for environment tests: where the shared test data lives.

Tests never download: they read local copies of public datasets. The folder is found from the
``VERIHUB_SHARED_DATA`` environment variable, or as ``shared/data`` beside the repository root.
"""

from __future__ import annotations

from pathlib import Path

from hub.env.settings import settings

__all__ = ["shared_data_dir"]


def shared_data_dir(start: Path | None = None) -> Path:
    """The folder of shared test data; raises FileNotFoundError with a hint when missing."""
    env = settings().shared_data
    if env:
        return Path(env)
    here = (start or Path.cwd()).resolve()
    for parent in (here, *here.parents):
        candidate = parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
        candidate = parent.parent / "shared" / "data"
        if (parent / "pyproject.toml").exists() and candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        "shared test data not found: set VERIHUB_SHARED_DATA to the folder holding gsm8k/, math500/, ..."
    )
