"""``verihub hub publish-bundled``: publish the environments shipped with verihub under one owner.

Each package folder of the shipped catalogue is built into a submission bundle exactly as
``verihub submit`` does (check and smoke evaluation included) and published straight into the
hub's data, as an admin would push it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hub.client import pack_bundle
from hub.env import UsageError
from hub.registry import PathSource, load_catalogue
from hub.server import open_hub
from hub.server.accounts import Principal, add_org, get_owner
from hub.server.core import HubConfig, LocalStorage, make_engine, sessions
from hub.server.packages.publish import Published, publish

__all__ = ["bundled_folders", "publish_bundled"]


def bundled_folders(only: Sequence[str] = ()) -> dict[str, Path]:
    """id -> package folder of the shipped catalogue's environments present in this checkout."""
    out = {}
    for e in load_catalogue(use_config=False).environments:
        if isinstance(e.install, PathSource) and (not only or e.id in only):
            folder = Path(e.install.path)
            if (folder / "pyproject.toml").is_file():
                out[e.id] = folder
    missing = set(only) - set(out)
    if missing:
        raise UsageError(f"not bundled here (need a verihub checkout): {', '.join(sorted(missing))}")
    return out


def publish_bundled(
    config: HubConfig,
    owner: str = "verihub",
    *,
    only: Sequence[str] = (),
    submit_options: dict[str, Any] | None = None,
    progress: Callable[[str], None] = lambda _msg: None,
) -> list[Published]:
    from hub.review.submit import submit

    with open_hub(config) as session:
        org = get_owner(session, owner) or add_org(session, owner, [])
        who = Principal(user_id=org.id, name=owner, scope="push", is_admin=False)
    engine = make_engine(config.database)
    make, storage = sessions(engine), LocalStorage(config.data)
    results = []
    try:
        for env_id, folder in bundled_folders(only).items():
            progress(f"building {env_id} from {folder}")
            with tempfile.TemporaryDirectory(prefix="verihub-bundled-") as tmp:
                bundle, manifest = submit(folder, out=Path(tmp) / "bundle", **(submit_options or {}))
                if not manifest.check_passed:
                    progress(f"skipping {env_id}: its check fails")
                    continue
                archive = pack_bundle(bundle, Path(tmp) / "bundle.tar.gz")
                results.append(publish(make, storage, config.limits, who, archive, owner_name=owner))
                progress(f"{results[-1].ref}@{results[-1].version}: {results[-1].message}")
    finally:
        engine.dispose()
    return results
