"""Hub server building blocks without a bundle: tokens, names, archive safety, storage, negotiation.

Each archive case was checked to fail with its defence removed: e.g. dropping the symlink test
in :func:`hub.server.core.archive.unpack_upload` makes ``test_links_are_refused`` fail, dropping the
ratio cap makes the bomb case fail (the file is written in full).
"""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from hub.registry.names import edit_distance, normalize, parse_ref
from hub.server.accounts.ratelimit import FailureLimiter
from hub.server.accounts.tokens import hash_secret, new_token, parse_token, scope_allows, verify_secret
from hub.server.core.archive import ArchiveError, check_wheel, unpack_upload
from hub.server.core.config import Limits
from hub.server.core.storage import LocalStorage, sha256_file
from hub.server.packages.index import negotiate
from hub.server.web.errors import STATUS


def test_tokens_are_salted_hashes_checked_in_constant_time() -> None:
    a, b = new_token(), new_token()
    assert a.text != b.text and a.salt != b.salt
    token_id, secret = parse_token(a.text) or ("", "")
    assert token_id == a.id and secret not in a.hash
    assert verify_secret(secret, a.salt, a.hash)
    assert not verify_secret(secret + "x", a.salt, a.hash)
    assert not verify_secret(secret, b.salt, a.hash)
    assert hash_secret(secret, a.salt) == a.hash
    assert parse_token("vh_nothex_abc") is None and parse_token(a.text + "x") is None


@pytest.mark.parametrize(
    ("have", "need", "ok"),
    [
        ("read", "read", True),
        ("read", "push", False),
        ("push", "push", True),
        ("push", "admin", False),
        ("admin", "push", True),
        ("bogus", "read", False),
    ],
)
def test_scopes_are_ordered(have: str, need: str, ok: bool) -> None:
    assert scope_allows(have, need) is ok


def test_names() -> None:
    assert normalize("Foo_Bar") == normalize("foo-bar") == normalize("FOO..bar") == "foo-bar"
    assert edit_distance("verihub-arith", "verihub-arlth") == 1
    assert edit_distance("verihub-arith", "verihub-arith") == 0
    assert edit_distance("arith", "textops") > 1
    assert parse_ref("verihub/arith@0.1.0") == ("verihub", "arith", "0.1.0")
    assert parse_ref("lab/my_env") == ("lab", "my_env", None)
    for bad in ("arith", "Verihub/arith", "a/../b", "a/b@", "a/b@1 0", "/arith"):
        if bad == "a/b@":
            assert parse_ref(bad)[2] is None
            continue
        with pytest.raises(ValueError):
            parse_ref(bad)


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for info, data in members:
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _file(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _link(name: str, target: str, kind: bytes) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


@pytest.mark.parametrize(
    ("member", "words"),
    [
        (_file("../evil.txt"), "outside"),
        (_file("dist/../../evil.txt"), "outside"),
        (_file("/etc/evil.txt"), "absolute"),
        (_file("a\\..\\evil.txt"), "unusable"),
        (_link("dist/link", "/etc/passwd", tarfile.SYMTYPE), "symlink"),
        (_link("dist/hard", "/etc/passwd", tarfile.LNKTYPE), "hard link"),
        (_link("dist/fifo", "", tarfile.FIFOTYPE), "special"),
    ],
)
def test_unsafe_members_are_refused(
    tmp_path: Path, member: tuple[tarfile.TarInfo, bytes | None], words: str
) -> None:
    archive = _tar(tmp_path / "up.tar.gz", [_file("manifest.json", b"{}"), member])
    dest = tmp_path / "out"
    dest.mkdir()
    with pytest.raises(ArchiveError, match=words) as exc:
        unpack_upload(archive, dest, Limits())
    assert STATUS[exc.value.problem] == 400
    assert not (tmp_path / "evil.txt").exists()
    assert not any(p.is_symlink() for p in dest.rglob("*"))


@pytest.mark.parametrize("kind", ["pax", "gnu-longname"])
def test_a_huge_tar_header_counts_against_the_unpacked_cap(tmp_path: Path, kind: str) -> None:
    """A pax header, or a GNU long-name header, is read whole into memory before its member:
    it must hit the cap too."""
    archive = tmp_path / "header-bomb.tar.gz"
    huge = "x" * 3 * 1024**2
    fmt = tarfile.PAX_FORMAT if kind == "pax" else tarfile.GNU_FORMAT
    pax = {"comment": huge} if kind == "pax" else None
    name = "manifest.json" if kind == "pax" else f"{huge}/manifest.json"
    with tarfile.open(archive, "w:gz", format=fmt, pax_headers=pax) as tf:
        info = tarfile.TarInfo(name)
        info.size = 2
        tf.addfile(info, io.BytesIO(b"{}"))
    assert archive.stat().st_size < 64 * 1024
    dest = tmp_path / "out"
    dest.mkdir()
    with pytest.raises(ArchiveError, match="unpacks to more than") as exc:
        unpack_upload(archive, dest, Limits(max_unpacked_bytes=1024**2, max_ratio=10**6))
    assert STATUS[exc.value.problem] == 413 and not any(dest.iterdir())


def test_archive_bombs_and_oversized_uploads_are_refused(tmp_path: Path) -> None:
    bomb = _tar(tmp_path / "bomb.tar.gz", [_file("eval/zeros", b"\0" * (8 * 1024**2))])
    assert bomb.stat().st_size < 64 * 1024
    dest = tmp_path / "out"
    dest.mkdir()
    with pytest.raises(ArchiveError, match="expands more than") as exc:
        unpack_upload(bomb, dest, Limits(max_ratio=50, ratio_floor=1024**2))
    assert STATUS[exc.value.problem] == 413
    assert sum(p.stat().st_size for p in dest.rglob("*") if p.is_file()) <= 2 * 1024**2
    dest2 = tmp_path / "out2"
    dest2.mkdir()
    with pytest.raises(ArchiveError, match="unpacks to more than"):
        unpack_upload(bomb, dest2, Limits(max_unpacked_bytes=1024**2, max_ratio=10**6))
    with pytest.raises(ArchiveError, match="cap is") as exc:
        unpack_upload(bomb, dest2, Limits(max_upload_bytes=1024))
    assert STATUS[exc.value.problem] == 413
    many = _tar(tmp_path / "many.tar.gz", [_file(f"f{i}") for i in range(30)])
    with pytest.raises(ArchiveError, match="more than 20 members"):
        unpack_upload(many, tmp_path / "out3", Limits(max_members=20))
    not_tar = tmp_path / "junk.tar.gz"
    not_tar.write_bytes(gzip.compress(b"not a tar at all" * 100))
    with pytest.raises(ArchiveError, match="not a gzipped tar"):
        unpack_upload(not_tar, tmp_path / "out4", Limits())


def test_wheels_with_links_or_bombs_are_refused(tmp_path: Path) -> None:
    wheel = tmp_path / "x-1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("x/__init__.py", "")
        link = zipfile.ZipInfo("x/link")
        link.external_attr = 0o120777 << 16
        zf.writestr(link, "/etc/passwd")
    with pytest.raises(ArchiveError, match="not a plain file"):
        check_wheel(wheel, Limits())
    bomb = tmp_path / "y-1-py3-none-any.whl"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("y/data.bin", b"\0" * (4 * 1024**2))
    with pytest.raises(ArchiveError, match="over the caps"):
        check_wheel(bomb, Limits(max_ratio=20))
    evil = tmp_path / "z-1-py3-none-any.whl"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("../../evil.py", "")
    with pytest.raises(ArchiveError, match="outside"):
        check_wheel(evil, Limits())


def test_storage_is_content_addressed_and_atomic(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path / "data")
    sha = store.put_bytes(b"hello")
    assert store.path(sha).read_bytes() == b"hello" and sha == sha256_file(store.path(sha))
    src = tmp_path / "f"
    src.write_bytes(b"hello")
    assert store.put_file(src) == sha
    assert list(store.tmp.iterdir()) == []  # temporary files were renamed or removed
    with pytest.raises(FileNotFoundError):
        store.path("0" * 64)
    with pytest.raises(ValueError):
        store.path("../../etc/passwd")
    (store.tmp / "put-stale").write_bytes(b"half")  # what a kill -9 mid-write leaves
    other = store.put_bytes(b"orphan")
    assert store.sweep([sha]) == [other]
    assert store.exists(sha) and not store.exists(other) and list(store.tmp.iterdir()) == []


def test_content_negotiation() -> None:
    assert negotiate("application/vnd.pypi.simple.v1+json") == "application/vnd.pypi.simple.v1+json"
    assert negotiate("text/html") == "text/html"
    assert negotiate("") == "text/html"
    assert (
        negotiate("application/vnd.pypi.simple.v1+html;q=0.2, application/vnd.pypi.simple.v1+json;q=0.9")
        == "application/vnd.pypi.simple.v1+json"
    )
    assert negotiate("application/vnd.pypi.simple.latest+json, text/html;q=0.01") == (
        "application/vnd.pypi.simple.v1+json"
    )
    assert negotiate("image/png") == "text/html"


def test_failure_limiter() -> None:
    lim = FailureLimiter(per_window=3, window_s=0.3)
    for _ in range(3):
        assert not lim.blocked("a")
        lim.fail("a")
    assert lim.blocked("a") and not lim.blocked("b")
    time.sleep(0.35)
    assert not lim.blocked("a")


def test_config_file_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hub.client.api import clear_login, hub_settings, save_login
    from hub.registry.config import configured_catalogues

    cfg = tmp_path / "config.toml"
    cfg.write_text('[hub]\ncatalogues = ["/srv/cat.json"]\n', encoding="utf-8")
    monkeypatch.setenv("VERIHUB_CONFIG", str(cfg))
    save_login("http://127.0.0.1:9/", "vh_0123456789ab_" + "a" * 43)
    assert os.stat(cfg).st_mode & 0o777 == 0o600
    assert hub_settings() == ("http://127.0.0.1:9", "vh_0123456789ab_" + "a" * 43)
    assert hub_settings("http://elsewhere:1")[1] is None  # a token is never sent to another hub
    # the catalogue setting survived, and the hub's catalogue is read too (list/search/info)
    assert configured_catalogues(cfg) == ["/srv/cat.json", "http://127.0.0.1:9/api/v1/catalogue.json"]
    assert clear_login() and not clear_login()
    assert hub_settings()[1] is None


def test_page_cache_is_dropped_on_bump(tmp_path: Path) -> None:
    from hub.server.core.cache import PageCache, bump

    cache = PageCache(tmp_path)
    stamp = cache.stamp()
    assert cache.get(("k",)) is None
    cache.put(("k",), stamp, (b"old", "text/html", 200))
    assert cache.get(("k",)) == (b"old", "text/html", 200)
    bump(tmp_path)
    assert cache.get(("k",)) is None  # without the bump, the stale page would be served
    cache.put(("k",), stamp, (b"rendered before the bump", "text/html", 200))
    assert cache.get(("k",)) is None


def test_push_refuses_what_it_cannot_upload(tmp_path: Path) -> None:
    from hub.client.api import pack_bundle
    from hub.client.push import push
    from hub.env.errors import UsageError

    with pytest.raises(UsageError, match="needs a token"):
        push(tmp_path, hub="http://127.0.0.1:9", token=None)
    with pytest.raises(UsageError, match="not a package folder"):
        push(tmp_path, hub="http://127.0.0.1:9", token="vh_x")
    bundle = tmp_path / "bundle"
    (bundle / "dist").mkdir(parents=True)
    (bundle / "manifest.json").write_text("{}")
    (bundle / "dist" / "link").symlink_to("/etc/passwd")
    with pytest.raises(UsageError, match="symlink"):
        pack_bundle(bundle, tmp_path / "b.tar.gz")
