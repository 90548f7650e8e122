"""One artifact set per version, bound at publish: file names parse to the manifest's
distribution and version, versions are unique as PEP 440 versions, direct-URL dependencies are
refused, and the index offers reviewed wheels only (never an sdist, whose build backend pip
would run)."""

from __future__ import annotations

import base64
import hashlib
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from hub.client.api import pack_bundle
from hub.review.submit import MANIFEST, Manifest, bundle_files
from hub.server.core.models import PASSED, Version
from hub.server.core.problems import Problem
from hub.server.packages.publish import PublishError, check_filenames, check_requirements

JSON_V1 = "application/vnd.pypi.simple.v1+json"


def _reseal(bundle: Path) -> None:
    """Rewrite the manifest's file list after the bundle's files changed (as an attacker would)."""
    manifest = Manifest.model_validate_json((bundle / MANIFEST).read_bytes())
    manifest = manifest.model_copy(update={"files": bundle_files(bundle)})
    (bundle / MANIFEST).write_text(manifest.model_dump_json(indent=2), encoding="utf-8")


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _add_requirement(wheel: Path, line: str) -> None:
    """Add ``Requires-Dist: line`` to the wheel's METADATA and fix its RECORD line."""
    with zipfile.ZipFile(wheel) as zf:
        items = [(i, zf.read(i)) for i in zf.infolist()]
    meta_name = next(i.filename for i, _ in items if i.filename.endswith(".dist-info/METADATA"))
    out = []
    for info, data in items:
        if info.filename == meta_name:
            head, sep, body = data.partition(b"\n\n")
            data = head + f"\nRequires-Dist: {line}".encode() + sep + body
            meta = data
        out.append((info, data))
    final = []
    for info, data in out:
        if info.filename.endswith(".dist-info/RECORD"):
            lines = [
                f"{meta_name},{_record_hash(meta)},{len(meta)}" if ln.startswith(meta_name + ",") else ln
                for ln in data.decode().splitlines()
            ]
            data = ("\n".join(lines) + "\n").encode()
        final.append((info, data))
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, data in final:
            zf.writestr(info, data)


def test_file_names_must_be_the_manifests_version() -> None:
    check_filenames(
        "verihub_arith-0.1.0-py3-none-any.whl", "verihub_arith-0.1.0.tar.gz", "verihub-arith", "0.1"
    )
    for wheel, sdist in [
        ("verihub_arith-0.1.0-py3-none-any.whl", "verihub_arith-9.0.tar.gz"),
        ("verihub_arith-9.0-py3-none-any.whl", "verihub_arith-0.1.0.tar.gz"),
        ("other-0.1.0-py3-none-any.whl", "verihub_arith-0.1.0.tar.gz"),
        ("verihub_arith-0.1.0-py3-none-any.whl", "verihub_arith-0.1.0.zip"),
    ]:
        with pytest.raises(PublishError) as err:
            check_filenames(wheel, sdist, "verihub-arith", "0.1.0")
        assert err.value.problem is Problem.UNPROCESSABLE


def test_direct_url_and_vcs_dependencies_are_refused() -> None:
    check_requirements(["numpy>=1.20", 'sympy; python_version >= "3.10"'])
    for line in ["evil @ https://example.invalid/evil-1.0-py3-none-any.whl", "x @ git+https://h/x.git@main"]:
        with pytest.raises(PublishError, match="direct URL") as err:
            check_requirements([line])
        assert err.value.problem is Problem.UNPROCESSABLE


@pytest.mark.slow
def test_a_renamed_sdist_is_refused_and_the_index_offers_wheels_only(
    hub: Any, arith_bundle: Any, packed: Callable[[Path], Path], tmp_path: Path
) -> None:
    renamed = tmp_path / "renamed"
    shutil.copytree(arith_bundle.bundle, renamed)
    sdist = next((renamed / "dist").glob("*.tar.gz"))
    sdist.rename(sdist.with_name(sdist.name.replace("-0.1.0.tar.gz", "-9.0.tar.gz")))
    _reseal(renamed)
    r = hub.push(pack_bundle(renamed, tmp_path / "renamed.tar.gz"))
    assert r.status_code == 422 and "is not verihub-arith 0.1.0" in r.text, r.text
    assert hub.push(packed(arith_bundle.bundle)).status_code == 201
    with hub.sessions()() as s, s.begin():  # as if reviewed: this test is about what is listed
        s.execute(update(Version).values(state=PASSED))
    for index in ("/simple/verihub-arith/", "/simple-unreviewed/verihub-arith/"):
        files = hub.client.get(index, headers={"Accept": JSON_V1}).json()["files"]
        assert [f["filename"].endswith(".whl") for f in files] == [True], files
        assert ".tar.gz" not in hub.client.get(index).text


@pytest.mark.slow
def test_the_same_pep440_version_is_refused(
    hub: Any, arith_bundle: Any, packed: Callable[[Path], Path], variant: Callable[..., Path]
) -> None:
    assert hub.push(packed(arith_bundle.bundle)).status_code == 201
    r = hub.push(variant(arith_bundle, version="0.1.0.0", summary="Other code, same version"))
    assert r.status_code == 409 and "already exists" in r.text, r.text


@pytest.mark.slow
def test_a_direct_url_dependency_is_refused_at_push(hub: Any, arith_bundle: Any, tmp_path: Path) -> None:
    bundle = tmp_path / "url-dep"
    shutil.copytree(arith_bundle.bundle, bundle)
    _add_requirement(
        next((bundle / "dist").glob("*.whl")), "evil @ https://example.invalid/evil-1.0-py3-none-any.whl"
    )
    _reseal(bundle)
    r = hub.push(pack_bundle(bundle, tmp_path / "url-dep.tar.gz"))
    assert r.status_code == 422 and "direct URL" in r.text, r.text
