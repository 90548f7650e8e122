"""The hub catalogue: schema, sources, extra catalogues from the user config, search."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import hub.cli
from hub.cli import authoring, hubcmds  # noqa: F401  (register the commands)
from hub.env.errors import UsageError
from hub.registry.catalogue import (
    Catalogue,
    PathSource,
    PypiSource,
    WheelSource,
    _main,
    configured_catalogues,
    load_catalogue,
    parse_catalogue,
    read_catalogue,
    refresh_catalogue,
    source_info,
)

HASH = "sha256:" + "ab" * 32
REPO = Path(__file__).resolve().parents[2]
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "*.egg-info")


def entry(env_id: str, version: str = "1.0.0", **install: str) -> dict[str, object]:
    return {
        "id": env_id,
        "version": version,
        "summary": f"{env_id} summary",
        "tags": ["demo"],
        "license": "MIT",
        "author": "someone",
        "install": install or {"kind": "pypi", "name": f"verihub-{env_id}"},
        "content_hash": HASH,
    }


def write_catalogue(path: Path, *entries: dict[str, object]) -> Path:
    path.write_text(json.dumps({"schema_version": 1, "environments": list(entries)}))
    return path


@pytest.fixture(autouse=True)
def _no_user_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("VERIHUB_CONFIG", str(tmp_path / "absent.toml"))


def test_shipped_catalogue_is_valid_and_lists_the_project_environments() -> None:
    cat = load_catalogue()
    assert cat.problems == []
    arith = cat.get("arith")
    assert arith is not None and isinstance(arith.install, PathSource)
    assert Path(arith.install.path) == (REPO / "environments" / "arith").resolve()  # relative to the file
    assert arith.license and arith.content_hash
    assert {e.id for e in cat.search("math")} >= {"arith", "gsm8k"}
    assert cat.get("no-such-env") is None


def test_shipped_catalogue_hashes_match_the_environments() -> None:
    """Fails when an environment changed and hub/registry/catalogue.json was not regenerated."""
    cat = load_catalogue(use_config=False)
    folders = sorted(p.name for p in (REPO / "environments").iterdir() if (p / "pyproject.toml").is_file())
    assert sorted(e.id for e in cat.environments) == folders, "every environment is catalogued"
    stale = []
    for e in cat.environments:
        assert isinstance(e.install, PathSource), f"{e.id}: the shipped catalogue uses path sources"
        env_id, version, digest = source_info(Path(e.install.path))
        if (env_id, version, digest) != (e.id, e.version, e.content_hash):
            stale.append(f"{e.id}: catalogue {e.version} {e.content_hash}, package {version} {digest}")
    assert not stale, (
        "hub/registry/catalogue.json is stale; regenerate it with "
        "`python -m hub.registry.catalogue --refresh`:\n" + "\n".join(stale)
    )


def test_refresh_rewrites_stale_path_entries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(REPO / "environments" / "arith", tmp_path / "envs" / "arith", ignore=IGNORE)
    path = write_catalogue(
        tmp_path / "cat.json",
        entry("arith", "0.0.1", kind="path", path="envs/arith"),
        entry("other", kind="pypi", name="verihub-other"),
    )
    assert _main(["--check", str(path)]) == 1
    assert "python -m hub.registry.catalogue --refresh" in capsys.readouterr().err
    changes = refresh_catalogue(path)
    assert [c.split(":")[0] for c in changes] == ["arith", "arith"]  # version and hash; pypi untouched
    arith = read_catalogue(str(path)).get("arith")
    assert arith is not None and arith.version == "0.1.0"
    assert arith.content_hash == source_info(tmp_path / "envs" / "arith")[2]
    assert _main(["--check", str(path)]) == 0 and refresh_catalogue(path) == []
    (tmp_path / "envs" / "arith" / "verihub_arith" / "extra.py").write_text("X = 1\n")
    assert refresh_catalogue(path, write=False) == [
        f"arith: content_hash {arith.content_hash} -> " + source_info(tmp_path / "envs" / "arith")[2]
    ]


def test_local_path_and_wheel_sources(tmp_path: Path) -> None:
    (tmp_path / "pkgs" / "local_env").mkdir(parents=True)
    path = write_catalogue(
        tmp_path / "cat.json",
        entry("local_env", kind="path", path="pkgs/local_env"),
        entry("wheel_env", kind="wheel", url="https://example.org/verihub_wheel_env-1.0.0-py3-none-any.whl"),
        entry("git_env", kind="git", url="https://example.org/repo.git", commit="0123456789abcdef"),
    )
    cat = read_catalogue(str(path))
    local = cat.get("local_env")
    assert local is not None and isinstance(local.install, PathSource)
    assert Path(local.install.path) == (tmp_path / "pkgs" / "local_env").resolve()  # relative to the file
    wheel = cat.get("wheel_env")
    assert wheel is not None and isinstance(wheel.install, WheelSource)
    assert cat.get("git_env") is not None and cat.get("git_env").source.startswith("git:")  # type: ignore[union-attr]
    assert all(e.catalogue == str(path) for e in cat.environments)


def test_versions_newest_first_and_pinned_lookup(tmp_path: Path) -> None:
    cat = read_catalogue(str(write_catalogue(tmp_path / "c.json", entry("e", "1.2.0"), entry("e", "1.10.0"))))
    assert [e.version for e in cat.versions("e")] == ["1.10.0", "1.2.0"]
    assert cat.get("e").version == "1.10.0"  # type: ignore[union-attr]
    assert cat.get("e", "1.2.0").version == "1.2.0"  # type: ignore[union-attr]
    assert cat.get("e", "9") is None


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"schema_version": 99, "environments": []}, "upgrade verihub"),
        ({"schema_version": 1, "environments": [entry("a"), entry("a")]}, "listed twice"),
        ({"schema_version": 1, "environments": [{**entry("a"), "content_hash": "md5:x"}]}, "content_hash"),
        (
            {"schema_version": 1, "environments": [{**entry("a"), "install": {"kind": "ftp"}}]},
            "catalogue schema",
        ),
        ({"schema_version": 1, "environments": [entry("Bad Id")]}, "catalogue schema"),
    ],
)
def test_invalid_catalogues_are_refused_with_a_reason(doc: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_catalogue(json.dumps(doc), origin="test")


def test_legacy_source_string_is_read_as_pypi() -> None:
    cat = parse_catalogue(
        json.dumps(
            {"schema_version": 1, "environments": [{"id": "x", "version": "1", "source": "verihub-x"}]}
        ),
        origin="t",
    )
    assert cat.get("x").install == PypiSource(name="verihub-x")  # type: ignore[union-attr]


def test_user_config_adds_catalogues_without_shadowing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    write_catalogue(tmp_path / "extra.json", entry("extra_env"), entry("arith", "0.1.0"))
    config = tmp_path / "config.toml"
    config.write_text('[hub]\ncatalogues = ["extra.json", "/does/not/exist.json"]\n')
    monkeypatch.setenv("VERIHUB_CONFIG", str(config))
    assert configured_catalogues() == [str(tmp_path / "extra.json"), "/does/not/exist.json"]
    cat = load_catalogue()
    assert cat.get("extra_env") is not None
    assert cat.get("arith").catalogue == "verihub (shipped)"  # type: ignore[union-attr]
    problems = " ".join(cat.problems)
    assert "arith@0.1.0" in problems and "/does/not/exist.json" in problems


def test_merge_keeps_first() -> None:
    a = Catalogue.model_validate({"environments": [entry("x", "1")]})
    b = Catalogue.model_validate({"environments": [entry("x", "1"), entry("y", "1")]})
    merged = a.merged(b)
    assert [e.id for e in merged.environments] == ["x", "y"] and len(merged.problems) == 1


def test_cli_search(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = write_catalogue(tmp_path / "c.json", entry("zebra_env"))
    with pytest.raises(SystemExit) as exc:
        hub.cli.main(["search", "zebra", "--json", "--catalogue", str(extra)])
    assert exc.value.code == 0
    found = json.loads(capsys.readouterr().out)
    assert [e["id"] for e in found] == ["zebra_env"]
    with pytest.raises(SystemExit):
        hub.cli.main(["search", "no-such-words-anywhere"])
    assert "no environment matches" in capsys.readouterr().out


@pytest.fixture
def http_root(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A folder served over HTTP on 127.0.0.1, and its base URL."""
    import functools
    import http.server
    import threading

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield tmp_path, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_catalogue_from_a_url(http_root: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    root, base = http_root
    write_catalogue(root / "remote.json", entry("remote_env"), entry("arith", "0.1.0"))
    cat = read_catalogue(f"{base}/remote.json")
    remote = cat.get("remote_env")
    assert remote is not None and remote.catalogue == f"{base}/remote.json" and remote.content_hash == HASH
    with pytest.raises(UsageError, match="cannot fetch catalogue .*404"):
        read_catalogue(f"{base}/missing.json")
    (root / "broken.json").write_text("{not json")
    with pytest.raises(UsageError, match="not valid JSON"):
        read_catalogue(f"{base}/broken.json")
    config = root / "config.toml"  # the same URL listed in the user config, merged after the shipped one
    config.write_text(f'[hub]\ncatalogues = ["{base}/remote.json"]\n')
    monkeypatch.setenv("VERIHUB_CONFIG", str(config))
    merged = load_catalogue()
    assert merged.get("remote_env") is not None
    assert merged.get("arith").catalogue == "verihub (shipped)"  # type: ignore[union-attr]
    assert any("arith@0.1.0" in p and base in p for p in merged.problems)


def test_cli_info_shows_author_hashes_and_reads_extra_catalogues(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hub.registry.entrypoints import package_hash

    extra = write_catalogue(tmp_path / "c.json", entry("zebra_env"))
    with pytest.raises(SystemExit) as exc:
        hub.cli.main(["info", "zebra_env", "--json", "--catalogue", str(extra)])
    assert exc.value.code == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["author"] == "someone" and shown["catalogue_hash"] == HASH
    assert shown["installed"].startswith("no") and shown["catalogue"] == str(extra)
    with pytest.raises(SystemExit) as exc:
        hub.cli.main(["info", "textops", "--json"])
    assert exc.value.code == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["installed_hash"] == package_hash("textops") and shown["author"]
    assert shown["hash_check"] in ("matches the catalogue", "DIFFERS from the catalogue")
    with pytest.raises(SystemExit) as exc:
        hub.cli.main(["info", "zebra_env"])  # not in the shipped catalogue alone
    assert exc.value.code == 1
