"""verihub install/uninstall: resolution, hash verification before installing, round trip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import hub.cli
from hub.cli import authoring, hubcmds  # noqa: F401  (register the commands)
from hub.env.errors import UsageError
from hub.registry.catalogue import Catalogue, CatalogueEntry, load_catalogue
from hub.registry.entrypoints import installed, load_environment, package_hash
from hub.registry.install import (
    InstallError,
    install,
    parse_spec,
    requirement_for,
    resolve,
    wheel_package_hash,
)
from hub.review.scaffold import scaffold
from tests.venvs import child_venv

ENV_ID = "hubtest_install_tiny"
PIP_ARGS = ("--no-build-isolation", "--no-index")
REPO = Path(__file__).resolve().parents[2]


def make_entry(**fields: object) -> CatalogueEntry:
    base: dict[str, object] = {"id": ENV_ID, "version": "0.1.0", "install": {"kind": "pypi", "name": "x"}}
    return CatalogueEntry.model_validate({**base, **fields})


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """(source folder, built wheel, its content hash) of a tiny environment."""
    root = tmp_path_factory.mktemp("pkg")
    src = scaffold(ENV_ID, dest=root / "src")
    out = root / "wheels"
    build = "import sys; from setuptools import build_meta as b; b.build_wheel(sys.argv[1])"
    subprocess.run([sys.executable, "-c", build, str(out)], cwd=src, check=True, capture_output=True)
    wheel = next(out.glob("*.whl"))
    return src, wheel, wheel_package_hash(wheel, ENV_ID)


def test_parse_spec_and_requirements(tmp_path: Path) -> None:
    assert parse_spec("arith") == ("arith", None)
    assert parse_spec("arith@0.2.0") == ("arith", "0.2.0")
    with pytest.raises(UsageError):
        parse_spec("arith@")
    assert requirement_for(make_entry()) == "x==0.1.0"
    git = make_entry(
        install={"kind": "git", "url": "https://h/r.git", "commit": "abcdef1", "subdirectory": "e"}
    )
    assert requirement_for(git) == "git+https://h/r.git@abcdef1#subdirectory=e"
    assert (
        requirement_for(make_entry(install={"kind": "wheel", "url": "https://h/w.whl"})) == "https://h/w.whl"
    )
    with pytest.raises(UsageError, match="not a Python package"):
        requirement_for(make_entry(install={"kind": "path", "path": str(tmp_path)}))


def test_resolve_errors_say_what_exists() -> None:
    cat = Catalogue(environments=[make_entry(), make_entry(version="0.2.0")])
    assert resolve(ENV_ID, cat).version == "0.2.0"
    with pytest.raises(UsageError, match="available: 0.2.0, 0.1.0"):
        resolve(f"{ENV_ID}@9.9", cat)
    with pytest.raises(UsageError, match="Did you mean"):
        resolve("hubtest_install_tin", cat)


@pytest.mark.sandbox
def test_wrong_hash_is_refused_and_nothing_is_installed(package: tuple[Path, Path, str]) -> None:
    src, _wheel, _good = package
    cat = Catalogue(
        environments=[
            make_entry(install={"kind": "path", "path": str(src)}, content_hash="sha256:" + "0" * 64)
        ]
    )
    with pytest.raises(InstallError, match="content hash mismatch"):
        install(ENV_ID, catalogue=cat, pip_args=PIP_ARGS, no_deps=True)
    assert ENV_ID not in installed()


@pytest.mark.parametrize("kind", ["wheel", "path"])
@pytest.mark.sandbox
def test_install_verifies_hash_then_uninstall(kind: str, package: tuple[Path, Path, str]) -> None:
    src, wheel, good = package
    source = {"kind": "wheel", "url": str(wheel)} if kind == "wheel" else {"kind": "path", "path": str(src)}
    cat = Catalogue(environments=[make_entry(install=source, content_hash=good)])
    before = sorted(p.name for p in src.iterdir())
    try:
        result = install(ENV_ID, catalogue=cat, pip_args=PIP_ARGS, no_deps=True)
        assert result.verified and result.content_hash == good
        assert ENV_ID in installed()
        assert package_hash(ENV_ID) == good
        assert load_environment(ENV_ID).num_tasks() == 8
        assert sorted(p.name for p in src.iterdir()) == before  # built from a copy: no build/ left
    finally:
        if ENV_ID in installed():
            with pytest.raises(SystemExit) as exc:
                hub.cli.main(["uninstall", ENV_ID])
            assert exc.value.code == 0
    assert ENV_ID not in installed()


def test_cli_uninstall_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        hub.cli.main(["uninstall", "surely_not_installed"])
    assert exc.value.code == 1
    assert "verihub list" in capsys.readouterr().err


@pytest.mark.sandbox
def test_shipped_catalogue_installs_arith_from_the_checkout(tmp_path: Path) -> None:
    """`verihub install arith` with the shipped catalogue (a path source with its hash), for real,
    into a throwaway venv that sees this interpreter's packages (the outer environment is untouched;
    tests/venvs.py)."""
    venv = tmp_path / "venv"
    python = child_venv(venv)
    env = {**os.environ, "PYTHONPATH": str(REPO), "VERIHUB_CONFIG": str(tmp_path / "absent.toml")}
    argv = ["install", "arith", "--no-deps", "--pip-arg=--no-build-isolation", "--pip-arg=--no-index"]
    run = [str(python), "-c", f"import hub.cli; hub.cli.main({argv!r})"]
    proc = subprocess.run(
        run, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shipped = load_catalogue(use_config=False).get("arith")
    assert shipped is not None and shipped.content_hash is not None
    said = " ".join(proc.stdout.split())  # robust to wrapping, whatever the checkout path's length
    assert "hash verified" in said and shipped.content_hash in said
    probe = (
        "import verihub_arith; from hub.registry.entrypoints import package_hash; "
        "print(verihub_arith.__file__); print(package_hash('arith'))"
    )
    out = subprocess.run([str(python), "-c", probe], env=env, capture_output=True, text=True, check=True)
    where, digest = out.stdout.split()
    assert Path(where).is_relative_to(venv) and digest == shipped.content_hash
    assert not (REPO / "environments" / "arith" / "build").exists()
