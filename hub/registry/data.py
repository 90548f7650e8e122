"""Loading environment data: from the Hugging Face hub by dataset id, or from a local file.

Environments built on public datasets call :func:`load_rows`. Users get the normal path
(``datasets.load_dataset(id)``); anyone offline passes a local JSONL/JSON/Parquet file or a
folder, either as an argument or through an environment variable the environment names.

Provenance: every load is recorded for the run that caused it (see :func:`recording_sources`):
a hub dataset by id, config, split and revision, a local copy by its file's sha256, and both by
``rows_sha256``, a hash of the rows themselves, so the same data has the same identity wherever
it came from. Offline, a hub download fails at once (not after the hub client's retries) with
the way to pass a local copy.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from hub.env import UsageError, record_source, recording_sources, rows_sha256

__all__ = ["load_rows", "recording_sources", "rows_sha256"]

_HUB_PROBE_S = 3.0


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
        file = _local_file(Path(local), split)
        rows = _load_local(file, split)
        record_source({"source": "local", "file": file.name, "sha256": _file_sha256(file)}, rows)
        return rows
    hint = f"pass a local copy with `--env-arg path=PATH`{f' or set {env_var}=PATH' if env_var else ''}"
    unreachable = _hub_unreachable()
    if unreachable is not None:
        raise UsageError(
            f"cannot download dataset {dataset!r}: the Hugging Face hub is unreachable ({unreachable}) "
            f"and there is no local copy; {hint} (a .jsonl/.json/.parquet file or a folder with "
            f"{split}.jsonl), or set HF_HUB_OFFLINE=1 to use a copy in the Hugging Face cache"
        )
    try:
        import datasets  # heavy: imported only when a download is really needed
    except ImportError as exc:  # pragma: no cover - datasets is a core dependency
        raise UsageError("the `datasets` package is missing; `pip install datasets`") from exc
    try:
        ds = datasets.load_dataset(dataset, config, split=split)
    except Exception as exc:
        raise UsageError(
            f"could not load dataset {dataset!r} (split {split!r}) from the Hugging Face hub: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}; {hint}"
        ) from exc
    rows = [dict(row) for row in ds]
    entry = {"source": "hub", "dataset": dataset, "config": config, "split": split, "revision": _revision(ds)}
    record_source(entry, rows)
    return rows


def _hub_unreachable() -> str | None:
    """Why the hub cannot be reached (a quick TCP probe), or None. Offline mode skips the probe:
    the hub client then reads its cache and fails fast by itself."""
    if any(
        os.environ.get(v, "").lower() in ("1", "true", "yes")
        for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    ):
        return None
    url = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host = url.hostname or "huggingface.co"
    port = url.port or (80 if url.scheme == "http" else 443)
    try:
        socket.create_connection((host, port), timeout=_HUB_PROBE_S).close()
    except OSError as exc:
        return f"{host}: {exc.strerror or type(exc).__name__}"
    return None


def _revision(ds: Any) -> str | None:
    """The hub commit a downloaded dataset came from (from its cache path), if it shows."""
    for entry in getattr(ds, "cache_files", None) or []:
        found = re.findall(r"[/\\]([0-9a-f]{40})[/\\]", str(entry.get("filename", "")))
        if found:
            return str(found[-1])
    return None


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


def _local_file(path: Path, split: str) -> Path:
    """The data file of a local copy: ``path`` itself, or ``{split}.jsonl|json|parquet`` in it."""
    if path.is_dir():
        for name in (f"{split}.jsonl", f"{split}.json", f"{split}.parquet"):
            if (path / name).exists():
                return path / name
        raise UsageError(f"{path} has no {split}.jsonl, {split}.json or {split}.parquet")
    if not path.exists():
        raise UsageError(f"data file {path} does not exist")
    return path


def _load_local(path: Path, split: str) -> list[dict[str, Any]]:
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
