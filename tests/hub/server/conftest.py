"""Shared fixtures of the hub server tests: real submission bundles, cheap variants of them,
and a hub (application, users, tokens) on a temporary SQLite database.

Bundles are built once per session with the real ``submit`` (build, check, smoke evaluation
with the embedded model). Variants (another version, distribution name, summary or README)
rebuild only the sdist and wheel: the import package is unchanged, so its content hash and
therefore the recorded evaluation stay valid, and ``verify-submission`` accepts them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hub.client.api import pack_bundle
from hub.review.check import CheckOptions
from hub.review.submit import MANIFEST, Manifest, bundle_files, submit

REPO = Path(__file__).resolve().parents[3]
FAST = CheckOptions(num_tasks=10, gold_tasks=8, probe_tasks=2, grade_timeout_s=2.0)
SCAFFOLD_ID = "hubtest_server_env"


def _have_local_model() -> bool:
    try:
        from hub.run.local_model import local_model_path

        local_model_path("smollm2")
        import xllamacpp  # noqa: F401
    except Exception:
        return False
    return True


needs_model = pytest.mark.skipif(not _have_local_model(), reason="needs the embedded model (verihub[local])")


@dataclass(frozen=True)
class Built:
    """A real bundle and the package folder it was built from."""

    bundle: Path
    src: Path


@pytest.fixture(scope="session")
def arith_bundle(tmp_path_factory: pytest.TempPathFactory) -> Built:
    if not _have_local_model():
        pytest.skip("needs the embedded model (verihub[local])")
    root = tmp_path_factory.mktemp("arith-bundle")
    src = REPO / "environments" / "arith"
    out, manifest = submit(src, out=root / "bundle", max_tokens=16, check_options=FAST)
    assert manifest.check_passed
    return Built(out, src)


@pytest.fixture(scope="session")
def scaffold_bundle(tmp_path_factory: pytest.TempPathFactory) -> Built:
    if not _have_local_model():
        pytest.skip("needs the embedded model (verihub[local])")
    from hub.review.scaffold import scaffold

    root = tmp_path_factory.mktemp("scaffold-bundle")
    src = scaffold(SCAFFOLD_ID, dest=root / "src")
    out, manifest = submit(src, out=root / "bundle", max_tokens=16, check_options=FAST)
    assert manifest.check_passed
    return Built(out, src)


def make_variant(
    base: Built,
    out: Path,
    *,
    version: str | None = None,
    distribution: str | None = None,
    summary: str | None = None,
    readme: str | None = None,
) -> Path:
    """A valid bundle of ``base`` with other distribution metadata; returns the bundle folder."""
    with tempfile.TemporaryDirectory(prefix="variant-") as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(
            base.src, src, ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__")
        )
        py = (src / "pyproject.toml").read_text(encoding="utf-8")
        if version is not None:
            py = re.sub(r'(?m)^version = ".*"$', f'version = "{version}"', py)
        if distribution is not None:
            py = re.sub(r'(?m)^name = ".*"$', f'name = "{distribution}"', py)
        if summary is not None:
            py = re.sub(r'(?m)^description = ".*"$', f'description = "{summary}"', py)
        (src / "pyproject.toml").write_text(py, encoding="utf-8")
        if readme is not None:
            (src / "README.md").write_text(readme, encoding="utf-8")
        out.mkdir(parents=True)
        cmd = [
            sys.executable,
            "-m",
            "build",
            "--no-isolation",
            "--skip-dependency-check",
            "-o",
            str(out / "dist"),
            str(src),
        ]
        subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    for part in ("check", "eval"):
        shutil.copytree(base.bundle / part, out / part)
    old = Manifest.model_validate_json((base.bundle / MANIFEST).read_bytes())
    wheel = next((out / "dist").glob("*.whl")).name
    dist_name, ver = wheel.split("-")[0], wheel.split("-")[1]
    manifest = old.model_copy(
        update={"distribution": distribution or old.distribution, "version": ver, "files": bundle_files(out)}
    )
    assert dist_name
    (out / MANIFEST).write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
    return out


@pytest.fixture
def variant(tmp_path: Path) -> Callable[..., Path]:
    """``variant(base, **changes)`` -> a packed bundle archive (.tar.gz)."""
    counter = iter(range(1000))

    def make(base: Built, **changes: Any) -> Path:
        n = next(counter)
        folder = make_variant(base, tmp_path / f"variant{n}", **changes)
        return pack_bundle(folder, tmp_path / f"variant{n}.tar.gz")

    return make


@pytest.fixture
def packed(tmp_path: Path) -> Callable[[Path], Path]:
    def pack(bundle: Path) -> Path:
        return pack_bundle(bundle, tmp_path / f"{bundle.parent.name}-{bundle.name}.tar.gz")

    return pack


@dataclass
class Hub:
    """A hub application on a temporary SQLite database, with users and tokens."""

    config: Any
    client: Any
    tokens: dict[str, str]

    def sessions(self) -> Any:
        return self.client.app.state.sessions

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def push(self, archive: Path, who: str = "alice", **query: str) -> Any:
        return self.client.post(
            "/api/v1/push", content=archive.read_bytes(), params=query, headers=self.auth(who)
        )

    def review(self) -> int:
        from hub.server.worker import work

        return int(work(self.config, once=True))


def make_tokens(config: Any) -> dict[str, str]:
    from hub.server.accounts.users import add_org, add_user, create_token
    from hub.server.admin import open_hub

    with open_hub(config) as s:
        add_user(s, "alice")
        add_user(s, "bob")
        add_user(s, "root", admin=True)
        add_org(s, "lab", ["alice"])
        return {
            "alice": create_token(s, "alice", "push"),
            "alice_read": create_token(s, "alice", "read"),
            "bob": create_token(s, "bob", "push"),
            "bob_read": create_token(s, "bob", "read"),
            "root": create_token(s, "root", "admin"),
        }


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    from starlette.testclient import TestClient

    from hub.server.app import create_app
    from hub.server.core.config import HubConfig

    config = HubConfig(data=tmp_path / "hub", lease_s=30.0, review_fast=True)
    tokens = make_tokens(config)
    with TestClient(create_app(config)) as client:
        yield Hub(config, client, tokens)


@pytest.fixture
def tokens_for() -> Callable[[Any], dict[str, str]]:
    """``tokens_for(config)``: users alice, bob, root (admin), org lab (alice), and their tokens."""
    return make_tokens


@pytest.fixture
def local_model() -> None:
    """Skips the test where the embedded model (needed to build a bundle) is not installed."""
    if not _have_local_model():
        pytest.skip("needs the embedded model (verihub[local])")
