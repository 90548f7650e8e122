"""The environment-page tests' data: the result pages' seed (``results_seed``) and more.

``seed_env_page(hub, tmp)`` adds a README and a wheel to alice/toy 1.1.0, two more public runs of
1.1.0 (a weaker model-a, a model-b), bob's private run of a model-z on a newer 1.2.0 (review
queued), and bob/other 0.1 whose review failed. Returns the run ids and the wheel's sha256.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from results_seed import STRONG, WEAK, _env, _run, seed

from hub.server.core.models import FAILED, EnvFile, Version
from leaderboard.testing import fake_env_hash

__all__ = ["README", "WHEEL", "seed_env_page"]

WHEEL = "alice_toy-1.1.0-py3-none-any.whl"
README = (
    "<h1>Toy readme</h1><p>How the toy works.</p>"
    "<pre><code>verihub eval alice/toy --model a-model-with-a-rather-long-name --split test --num-tasks 100"
    "</code></pre><p>A long word: " + "pneumonoultramicroscopicsilicovolcanoconiosis" * 2 + ".</p>"
)


def seed_env_page(hub: Any, tmp: Path) -> dict[str, Any]:
    ids = seed(hub, tmp / "runs").ids
    storage = hub.client.app.state.storage
    blob = tmp / WHEEL
    blob.write_bytes(b"PK fake wheel bytes " * 50)
    sha = storage.put_file(blob)
    with hub.sessions()() as s:
        v110 = s.query(Version).filter_by(version="1.1.0").one()
        v110.readme_html = README
        s.add(EnvFile(version_id=v110.id, kind="wheel", filename=WHEEL, sha256=sha, size=blob.stat().st_size))
        v120 = Version(
            environment_id=v110.environment.id,
            version="1.2.0",
            manifest_sha256="0" * 64,
            content_hash=fake_env_hash("toy", "1.2.0"),
        )
        s.add(v120)
        s.flush()
        runs = tmp / "more"
        ids["a-weak"] = _run(s, storage, runs, "aweak", v110, "alice", "model-a", WEAK)
        ids["b-new"] = _run(s, storage, runs, "bnew", v110, "bob", "model-b", WEAK)
        ids["z-private"] = _run(s, storage, runs, "zpriv", v120, "bob", "model-z", STRONG, private=True)
        (other,) = _env(s, "bob", "other", ["0.1"])
        other.state = FAILED
        s.commit()
    return {"ids": ids, "sha": sha}
