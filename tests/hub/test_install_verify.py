"""Installs verify before anything runs: hostile wheels, sources and catalogues are refused.

Each defence has a negative case that shows the test can fail: the same input passes when the
catalogue declares the extra file (so the refusal comes from the rule, not from a broken wheel),
or, for the sandboxed build, the marker appears when the build runs with the sandbox switched off.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import os
import textwrap
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from hub.registry.catalogue import Catalogue, CatalogueEntry, PathSource, load_catalogue, read_catalogue
from hub.registry.install import InstallError, build_wheel, install, refuse_links
from hub.registry.package import hash_tree
from hub.registry.wheels import WheelError, verify_wheel
from hub.sandbox import unavailable_reason

ENV = "vh_probe"
PKG = "verihub_vh_probe"
NEEDS_SANDBOX = pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def make_wheel(
    folder: Path,
    *,
    extra: dict[str, bytes] | None = None,
    scripts: str = "",
    unlisted: dict[str, bytes] | None = None,
    tamper: str | None = None,
    symlink: str | None = None,
) -> Path:
    """A wheel of environment ``vh_probe`` built by hand, with optional hostile additions."""
    dist_info = "verihub_vh_probe-0.1.0.dist-info"
    files: dict[str, bytes] = {
        f"{PKG}/__init__.py": b"def load_environment():\n    raise RuntimeError('not for this test')\n",
        f"{PKG}/data.txt": b"tasks\n",
        f"{dist_info}/METADATA": b"Metadata-Version: 2.1\nName: verihub-vh-probe\nVersion: 0.1.0\n",
        f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist_info}/entry_points.txt": (
            f"[verihub.environments]\n{ENV} = {PKG}:load_environment\n{scripts}".encode()
        ),
        **(extra or {}),
    }
    lines = [_record_line(n, d) for n, d in files.items()]
    if tamper is not None:
        files[tamper] = files[tamper] + b"# changed after RECORD was written\n"
    lines.append(f"{dist_info}/RECORD,,")
    path = folder / "verihub_vh_probe-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in {**files, **(unlisted or {})}.items():
            zf.writestr(name, data)
        if symlink is not None:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = 0o120777 << 16
            zf.writestr(info, "/etc/passwd")
        zf.writestr(f"{dist_info}/RECORD", "\n".join(lines) + "\n")
    return path


def test_a_clean_wheel_passes_and_hashes_like_the_installed_package(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path)
    check = verify_wheel(str(wheel), env_id=ENV)
    assert check.import_package == PKG and check.extra_files == ()
    unpacked = tmp_path / "u"
    zipfile.ZipFile(wheel).extractall(unpacked)
    assert check.content_hash == hash_tree(unpacked / PKG)  # the value package_hash gives once installed


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        ({"evil.pth": b"import os; os.system('id')\n"}, r"a \.pth file"),
        ({"helper.py": b"x = 1\n"}, "a top-level module"),
        ({"other_pkg/__init__.py": b""}, "another top-level package"),
        ({"verihub_vh_probe-0.1.0.data/scripts/pip": b"#!/bin/sh\n"}, r"a \.data scheme"),
    ],
)
def test_files_outside_the_import_package_are_refused_unless_declared(
    tmp_path: Path, extra: dict[str, bytes], match: str
) -> None:
    wheel = make_wheel(tmp_path, extra=extra)
    with pytest.raises(WheelError, match=match):
        verify_wheel(str(wheel), env_id=ENV)
    # negative case: the same wheel passes when its catalogue entry declares the file, and the
    # declared file is hashed, so the refusal above is the rule at work
    declared = verify_wheel(str(wheel), env_id=ENV, extra_files=list(extra))
    assert declared.extra_files == tuple(extra) and declared.extra_hash is not None


def test_console_scripts_are_refused_unless_declared(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, scripts="[console_scripts]\npip = verihub_vh_probe:load_environment\n")
    with pytest.raises(WheelError, match="installs the program 'pip'"):
        verify_wheel(str(wheel), env_id=ENV)
    assert verify_wheel(str(wheel), env_id=ENV, extra_files=["scripts/pip"]).import_package == PKG


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"unlisted": {f"{PKG}/sneaky.py": b"x = 1\n"}}, "is not listed in RECORD"),
        ({"tamper": f"{PKG}/__init__.py"}, "does not match its RECORD hash"),
        ({"unlisted": {"../escape.py": b""}}, "unsafe path"),
        ({"unlisted": {"/abs.py": b""}}, "unsafe path"),
        ({"symlink": f"{PKG}/key"}, "symbolic link"),
    ],
)
def test_malformed_wheels_are_refused(tmp_path: Path, kwargs: dict[str, object], match: str) -> None:
    wheel = make_wheel(tmp_path, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(WheelError, match=match):
        verify_wheel(str(wheel), env_id=ENV)


def test_a_zip_bomb_member_is_refused(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path)
    with zipfile.ZipFile(wheel, "a", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{PKG}/bomb.bin", b"\0" * (64 * 1024 * 1024))
    with pytest.raises(WheelError, match="compressed more than"):
        verify_wheel(str(wheel), env_id=ENV)


# -- sources ----------------------------------------------------------------------------------
def _source(folder: Path, *, setup_py: str = "") -> Path:
    src = folder / "src"
    (src / PKG).mkdir(parents=True)
    (src / PKG / "__init__.py").write_text("def load_environment():\n    return None\n")
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
    if setup_py:
        (src / "setup.py").write_text(setup_py)
    return src


def _entry(src: Path, content_hash: str | None) -> Catalogue:
    entry = CatalogueEntry(
        id=ENV,
        version="0.1.0",
        install=PathSource(path=str(src)),
        content_hash=content_hash,
        catalogue="test",
    )
    return Catalogue(environments=[entry])


def test_symlinks_and_hard_links_in_sources_are_refused(tmp_path: Path) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY")
    src = _source(tmp_path)
    refuse_links(src)  # negative case: the clean source passes
    (src / PKG / "key").symlink_to(secret)
    with pytest.raises(InstallError, match="symbolic link"):
        refuse_links(src)
    (src / PKG / "key").unlink()
    os.link(secret, src / PKG / "key")
    with pytest.raises(InstallError, match="hard-linked"):
        install(ENV, catalogue=_entry(src, None))


@NEEDS_SANDBOX
@pytest.mark.sandbox
@pytest.mark.parametrize("sandboxed", [True, False])
def test_a_build_step_cannot_write_outside_the_sandbox(tmp_path: Path, sandboxed: bool) -> None:
    """setup.py writes a marker into the host's folder when it runs. In the sandbox the write
    fails and the build still succeeds (the host folder is read-only there); without it
    (``unsafe=True``, the negative case) the marker appears, so the first case can fail."""
    marker = tmp_path / "host" / "pwned"
    marker.parent.mkdir()
    setup_py = (
        "import pathlib\nfrom setuptools import setup\n"
        f"try:\n    pathlib.Path({str(marker)!r}).write_text('x')\nexcept OSError:\n    pass\nsetup()\n"
    )
    src = _source(tmp_path, setup_py=setup_py)
    work = tmp_path / "work"
    copy = work / "src"
    import shutil

    shutil.copytree(src, copy)
    wheel = build_wheel(copy, work / "wheels", unsafe=not sandboxed)
    assert verify_wheel(str(wheel), env_id=ENV).import_package == PKG
    assert marker.exists() is (not sandboxed)


@NEEDS_SANDBOX
@pytest.mark.sandbox
def test_a_wrong_hash_installs_nothing_and_ran_no_code_on_the_host(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    setup_py = (
        "import pathlib\nfrom setuptools import setup\n"
        f"try:\n    pathlib.Path({str(marker)!r}).write_text('x')\nexcept OSError:\n    pass\nsetup()\n"
    )
    src = _source(tmp_path, setup_py=setup_py)
    with pytest.raises(InstallError, match="content hash mismatch.*nothing was installed"):
        install(ENV, catalogue=_entry(src, "sha256:" + "0" * 64))
    assert not marker.exists()


# -- catalogue origins ------------------------------------------------------------------------
@pytest.fixture
def served_catalogue(tmp_path: Path) -> Iterator[tuple[str, bytes]]:
    doc = {
        "schema_version": 1,
        "environments": [
            {
                "id": "arith",
                "version": "9.9.9",
                "install": {"kind": "wheel", "url": "http://127.0.0.1:1/evil.whl"},
            },
            {"id": "lab_env", "version": "1.0.0", "install": {"kind": "pypi", "name": "verihub-lab-env"}},
        ],
    }
    body = json.dumps(doc).encode()
    (tmp_path / "cat.json").write_bytes(body)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a: object, **kw: object) -> None:
            super().__init__(*a, directory=str(tmp_path), **kw)  # type: ignore[arg-type]

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/cat.json", body
    finally:
        server.shutdown()


def test_another_catalogue_cannot_add_versions_of_a_shipped_id(
    served_catalogue: tuple[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = served_catalogue
    monkeypatch.setenv("VERIHUB_CONFIG", str(tmp_path / "none.toml"))
    cat = load_catalogue(extra=[url])
    assert cat.get("arith") is not None and cat.get("arith").version != "9.9.9"  # type: ignore[union-attr]
    assert cat.get("lab_env") is not None  # ids it owns are fine
    assert any("arith@9.9.9" in p and "belongs to" in p for p in cat.problems)
    # negative case: pinning that catalogue for arith in the config lets it own arith
    config = tmp_path / "config.toml"
    config.write_text(f'[hub.pins]\narith = "{url}"\n')
    monkeypatch.setenv("VERIHUB_CONFIG", str(config))
    pinned = load_catalogue(extra=[url])
    assert pinned.get("arith") is not None and pinned.get("arith").version == "9.9.9"  # type: ignore[union-attr]


def test_plain_http_is_refused_off_loopback_unless_allowed() -> None:
    from hub.env.errors import UsageError

    with pytest.raises(UsageError, match="plain http"):
        read_catalogue("http://catalogue.invalid/cat.json")  # refused before any connection


def test_a_pinned_catalogue_hash_is_checked(served_catalogue: tuple[str, bytes]) -> None:
    from hub.env.errors import UsageError

    url, body = served_catalogue
    good = hashlib.sha256(body).hexdigest()
    assert read_catalogue(f"{url}#sha256={good}").get("lab_env") is not None
    with pytest.raises(UsageError, match="does not match its pinned sha256"):
        read_catalogue(f"{url}#sha256={'0' * 64}")


def test_declared_extra_files_must_be_pinned_by_a_hash(tmp_path: Path) -> None:
    """extra_files without extra_hash is refused by the catalogue schema, and a wheel whose extra
    files differ from the pinned hash installs nothing (the matching hash is the negative case)."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="extra_files needs extra_hash"):
        CatalogueEntry(id=ENV, version="0.1.0", install=PathSource(path="/x"), extra_files=("evil.pth",))
    wheel = make_wheel(tmp_path, extra={"helper.py": b"x = 1\n"})
    good = verify_wheel(str(wheel), env_id=ENV, extra_files=["helper.py"]).extra_hash
    assert good is not None and good != "sha256:" + "0" * 64


def test_a_wheel_whose_extra_files_differ_from_the_pin_installs_nothing(tmp_path: Path) -> None:
    from hub.registry.catalogue import WheelSource

    wheel = make_wheel(tmp_path, extra={"helper.py": b"x = 1\n"})
    check = verify_wheel(str(wheel), env_id=ENV, extra_files=["helper.py"])
    entry = CatalogueEntry(
        id=ENV,
        version="0.1.0",
        install=WheelSource(url=wheel.as_uri()),
        content_hash=check.content_hash,
        extra_files=("helper.py",),
        extra_hash="sha256:" + "0" * 64,
        catalogue="test",
    )
    with pytest.raises(InstallError, match="declared extra files hash to .* nothing was installed"):
        install(ENV, catalogue=Catalogue(environments=[entry]), no_deps=True)
    from importlib.metadata import PackageNotFoundError, version

    with pytest.raises(PackageNotFoundError):
        version("verihub-vh-probe")
