"""``verihub push``: build the submission bundle exactly as ``verihub submit`` does, upload it."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hub.client.api import hub_request, pack_bundle
from hub.env import UsageError

__all__ = ["push"]


def push(
    target: Path,
    *,
    hub: str,
    token: str | None,
    owner: str | None = None,
    private: bool = False,
    submit_options: dict[str, Any] | None = None,
    on_step: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Push a package folder (built with :func:`hub.review.submit.submit`), a bundle folder, or a
    bundle archive (``.tar.gz``); returns the hub's answer. ``on_step`` hears each step as it
    starts (building and checking, uploading N bytes, the hub's verdict on the upload)."""
    say = on_step or (lambda _msg: None)
    if not token:
        raise UsageError("pushing needs a token: `verihub login --hub URL` first, or --token")
    query = {"owner": owner} if owner else {}
    if private:
        query["private"] = "1"
    with tempfile.TemporaryDirectory(prefix="verihub-push-") as tmp:
        if target.is_file() and target.name.endswith(".tar.gz"):
            archive = target
        elif (target / "manifest.json").is_file():
            archive = pack_bundle(target, Path(tmp) / "bundle.tar.gz")
        elif (target / "pyproject.toml").is_file():
            from hub.review.submit import submit

            say(f"building and checking {target} (as `verihub submit` does)")
            bundle, manifest = submit(target, out=Path(tmp) / "bundle", **(submit_options or {}))
            if not manifest.check_passed:
                text = (bundle / "check" / "report.txt").read_text(encoding="utf-8")
                failed = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("FAIL")]
                raise UsageError(
                    f"the check of {target} fails ({'; '.join(failed[:3]) or 'see `verihub check`'}); "
                    "fix it, then push"
                )
            archive = pack_bundle(bundle, Path(tmp) / "bundle.tar.gz")
        else:
            raise UsageError(f"{target} is not a package folder, a bundle folder or a bundle .tar.gz")
        say(f"uploading {archive.stat().st_size:,} bytes to {hub}")
        answer: dict[str, Any] = hub_request(
            hub, "/api/v1/push", token=token, method="POST", body=archive, query=query
        )
    return answer
