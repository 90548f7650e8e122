"""Loading environment data: from the Hugging Face hub by dataset id, or from a local file.

Environments built on public datasets call :func:`load_rows`. Users get the normal path
(``datasets.load_dataset(id)``); anyone offline passes a local JSONL/JSON/Parquet file or a
folder, either as an argument or through an environment variable the environment names.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hub.env.errors import UsageError

__all__ = ["load_rows"]


def load_rows(
    *,
    dataset: str,
    split: str,
    config: str | None = None,
    path: str | os.PathLike[str] | None = None,
    env_var: str | None = None,
) -> list[dict[str, Any]]:
    """Rows of a dataset as plain dicts.

    ``path`` (or, when it is None, the environment variable ``env_var``) points at a local copy:
    a ``.jsonl``/``.json``/``.parquet`` file, or a folder holding ``{split}.jsonl``. Otherwise
    the rows come from ``datasets.load_dataset(dataset, config, split=split)``.
    """
    local = path if path is not None else (os.environ.get(env_var) if env_var else None)
    if local:
        return _load_local(Path(local), split)
    try:
        import datasets  # heavy: imported only when a download is really needed
    except ImportError as exc:  # pragma: no cover - datasets is a core dependency
        raise UsageError("the `datasets` package is missing; `pip install datasets`") from exc
    try:
        ds = datasets.load_dataset(dataset, config, split=split)
    except Exception as exc:
        hint = f" or set {env_var}=PATH" if env_var else ""
        raise UsageError(
            f"could not load dataset {dataset!r} (split {split!r}) from the Hugging Face hub: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}. "
            f"Pass a local copy with path=PATH{hint}."
        ) from exc
    return [dict(row) for row in ds]


def _load_local(path: Path, split: str) -> list[dict[str, Any]]:
    if path.is_dir():
        for name in (f"{split}.jsonl", f"{split}.json", f"{split}.parquet"):
            if (path / name).exists():
                return _load_local(path / name, split)
        raise UsageError(f"{path} has no {split}.jsonl, {split}.json or {split}.parquet")
    if not path.exists():
        raise UsageError(f"data file {path} does not exist")
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        rows: list[dict[str, Any]] = []
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise UsageError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from exc
        return rows
    if suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and split in data:
            data = data[split]
        if not isinstance(data, list):
            raise UsageError(f"{path}: expected a JSON list of rows")
        return [dict(r) for r in data]
    if suffix == ".parquet":
        import datasets

        return [dict(r) for r in datasets.Dataset.from_parquet(str(path))]
    raise UsageError(f"{path}: unsupported data file type {suffix!r} (use .jsonl, .json or .parquet)")
