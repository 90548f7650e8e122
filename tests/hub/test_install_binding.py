"""A bundled wheel is bound to its sdist by what it runs, not only by its import package's files.

The repointed wheel below holds the very files of the sdist's build (same content hash) but its
``vh_probe`` entry point names another function of the package: ``bind_wheel_to_sdist`` must
refuse it, and accept the wheel as built (the negative case).
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from hub.registry.install import check_wheel
from hub.review.verify import bind_wheel_to_sdist

ENV = "vh_probe"
PKG = "verihub_vh_probe"


def _source(root: Path) -> Path:
    src = root / "src"
    (src / PKG).mkdir(parents=True)
    (src / PKG / "__init__.py").write_text(
        "def load_environment():\n    return 'reviewed'\n\n\ndef other():\n    return 'not reviewed'\n"
    )
    (src / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""\
            [build-system]
            requires = ["setuptools>=68"]
            build-backend = "setuptools.build_meta"
            [project]
            name = "verihub-vh-probe"
            version = "0.1.0"
            [project.entry-points."verihub.environments"]
            {ENV} = "{PKG}:load_environment"
            [tool.setuptools]
            packages = ["{PKG}"]
            """
        )
    )
    return src


def _build(src: Path, out: Path, what: str) -> Path:
    code = f"import sys; from setuptools import build_meta as b; b.build_{what}(sys.argv[1])"
    subprocess.run([sys.executable, "-c", code, str(out)], cwd=src, check=True, capture_output=True)
    return next(out.glob("*.whl" if what == "wheel" else "*.tar.gz"))


def _repoint(wheel: Path, out: Path, target: str) -> Path:
    """A copy of ``wheel`` whose environment entry point names ``target`` (RECORD kept right)."""
    out.mkdir()
    copy = out / wheel.name
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(copy, "w") as dst:
        members = {m: src.read(m) for m in src.namelist()}
        ep_name = next(m for m in members if m.endswith(".dist-info/entry_points.txt"))
        old = members[ep_name]
        new = f"[verihub.environments]\n{ENV} = {target}\n".encode()
        members[ep_name] = new

        def line(data: bytes) -> bytes:
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            return b"sha256=" + digest + b"," + str(len(data)).encode()

        record = next(m for m in members if m.endswith(".dist-info/RECORD"))
        members[record] = members[record].replace(line(old), line(new))
        for m, data in members.items():
            dst.writestr(m, data)
    return copy


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("bind")
    src = _source(root)
    wheel = _build(src, root / "dist", "wheel")
    sdist = _build(src, root / "dist", "sdist")
    return sdist, wheel, _repoint(wheel, root / "evil", f"{PKG}:other")


@pytest.mark.slow
def test_a_repointed_entry_point_unbinds_the_wheel_from_its_sdist(built: tuple[Path, Path, Path]) -> None:
    sdist, wheel, repointed = built
    honest, evil = check_wheel(wheel, ENV), check_wheel(repointed, ENV)
    assert honest.content_hash == evil.content_hash  # the package's files alone cannot tell them apart
    assert evil.entry_point == f"{PKG}:other"
    assert bind_wheel_to_sdist(sdist, honest, unsafe=True) == []  # negative case: the honest build binds
    problems = bind_wheel_to_sdist(sdist, evil, unsafe=True)
    assert problems and "entry points" in problems[0]
