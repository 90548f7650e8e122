"""Install fetches: nothing is built on the host, downloads stay on https, what was installed is
what was verified.

pip is replaced by a recorder (``_pip``) where a test only needs to see what verihub asks of it;
each refusal has a passing counterpart (a loopback URL, a wheel source, the verified target).
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import threading
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx
import pytest

import hub.registry.entrypoints as entrypoints
import hub.registry.install as install_mod
import hub.registry.sources as sources
from hub.client.api import hub_request
from hub.env.errors import UsageError
from hub.registry.catalogue import Catalogue, CatalogueEntry, read_catalogue
from hub.registry.entrypoints import EnvInfo
from hub.registry.fetch import InsecureURLError, download, open_url
from hub.registry.install import InstallError, install

ENV = "vh_probe"
PKG = "verihub_vh_probe"


def _wheel(folder: Path, pkg: str = PKG) -> Path:
    dist_info = "verihub_vh_probe-0.1.0.dist-info"
    files = {
        f"{pkg}/__init__.py": b"def load_environment():\n    return None\n",
        f"{dist_info}/METADATA": b"Metadata-Version: 2.1\nName: verihub-vh-probe\nVersion: 0.1.0\n",
        f"{dist_info}/entry_points.txt": f"[verihub.environments]\n{ENV} = {pkg}:load_environment\n".encode(),
    }
    record = [
        f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}"
        for n, d in files.items()
    ]
    path = folder / "verihub_vh_probe-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for n, d in files.items():
            zf.writestr(n, d)
        zf.writestr(f"{dist_info}/RECORD", "\n".join([*record, f"{dist_info}/RECORD,,"]) + "\n")
    return path


def _catalogue(install: dict[str, str], content_hash: str | None = None, **more: str) -> Catalogue:
    fields = {"id": ENV, "version": "0.1.0", "install": install, "content_hash": content_hash, **more}
    return Catalogue(environments=[CatalogueEntry.model_validate({**fields, "catalogue": "t"})])


@pytest.fixture
def pip_calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Records every pip call; downloads fail as for a release without a wheel, installs do nothing."""
    calls: list[list[str]] = []

    def fake(args: Sequence[str], *, what: str) -> str:
        calls.append(list(args))
        if args[0] == "download":
            raise InstallError(f"pip failed while {what}: ERROR: No matching distribution found")
        return ""

    monkeypatch.setattr(sources, "run_pip", fake)
    return calls


# -- 4. nothing is built on the host ----------------------------------------------------------
def test_a_pypi_release_without_a_wheel_is_refused_never_built(pip_calls: list[list[str]]) -> None:
    """pip prepares an sdist's metadata to download it, running its setup.py here: verihub asks
    pip for wheels only and refuses the release instead of falling back to the sdist."""
    with pytest.raises(InstallError, match="wheels only"):
        install(ENV, catalogue=_catalogue({"kind": "pypi", "name": "verihub-vh-probe"}))
    assert pip_calls and all("--only-binary" in call for call in pip_calls)
    assert not any("--no-binary" in call for call in pip_calls)


def test_a_wheel_source_must_name_a_wheel(pip_calls: list[list[str]]) -> None:
    with pytest.raises(InstallError, match=r"does not name a \.whl file"):
        install(ENV, catalogue=_catalogue({"kind": "wheel", "url": "https://127.0.0.1:1/pkg-0.1.0.tar.gz"}))
    assert pip_calls == []  # pip never saw the sdist URL


# -- 6. dependencies and the entry-point target -----------------------------------------------
def _installed_as(monkeypatch: pytest.MonkeyPatch, target: str) -> list[str]:
    removed: list[str] = []
    info = EnvInfo(id=ENV, version="0.1.0", summary="", installed=True, distribution="x", entry_point=target)
    monkeypatch.setattr(entrypoints, "installed", lambda: {ENV: info})

    def fake_uninstall(env_id: str) -> str:
        removed.append(env_id)
        return "x"

    monkeypatch.setattr(install_mod, "uninstall", fake_uninstall)
    return removed


def test_dependencies_install_as_wheels_only(
    tmp_path: Path, pip_calls: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    _installed_as(monkeypatch, f"{PKG}:load_environment")
    wheel = _wheel(tmp_path)
    result = install(ENV, catalogue=_catalogue({"kind": "wheel", "url": str(wheel)}))
    (call,) = [c for c in pip_calls if c[0] == "install"]
    # pip installs the verified files alone: dependencies were resolved as wheels only (an sdist
    # would run setup.py) and verified before (tests/hub/test_install_dependency_rules.py)
    assert "--no-deps" in call and call[-1].endswith(wheel.name) and len(call) == 4
    assert result.entry_point == f"{PKG}:load_environment"  # recorded: what was verified and installed
    assert result.wheel_sha256 == hashlib.sha256(wheel.read_bytes()).hexdigest()


def test_an_installed_target_other_than_the_verified_one_is_uninstalled(
    tmp_path: Path, pip_calls: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another distribution declaring the same id decides what load_environment runs; without a
    catalogue hash nothing else would notice."""
    removed = _installed_as(monkeypatch, "os:system")
    with pytest.raises(InstallError, match="its entry point is os:system"):
        install(ENV, catalogue=_catalogue({"kind": "wheel", "url": str(_wheel(tmp_path))}))
    assert removed == [ENV]


def test_a_catalogue_can_pin_the_entry_point_target(
    tmp_path: Path, pip_calls: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The content hash covers the package's files, not which function the entry point names: a
    re-uploaded wheel (say with a build tag) could repoint it; ``entry_point`` pins it."""
    _installed_as(monkeypatch, f"{PKG}:load_environment")
    source = {"kind": "wheel", "url": str(_wheel(tmp_path))}
    with pytest.raises(InstallError, match="the catalogue .* pins the entry point"):
        install(ENV, catalogue=_catalogue(source, entry_point=f"{PKG}:other"))
    assert not any(c[0] == "install" for c in pip_calls)
    install(ENV, catalogue=_catalogue(source, entry_point=f"{PKG}:load_environment"))  # negative case
    assert any(c[0] == "install" for c in pip_calls)


@pytest.mark.parametrize(
    ("pkg", "match"),
    [("pluggy", "belongs to pluggy"), ("hub", "belongs to verihub"), ("json", "already importable")],
)
def test_a_wheel_may_not_take_over_another_package(
    tmp_path: Path, pip_calls: list[list[str]], monkeypatch: pytest.MonkeyPatch, pkg: str, match: str
) -> None:
    """pip overwrites files of other distributions without a word: an environment whose import
    package is pluggy, verihub's own hub, or shadows the standard library is refused first."""
    _installed_as(monkeypatch, f"{pkg}:load_environment")
    with pytest.raises(InstallError, match=match):
        install(ENV, catalogue=_catalogue({"kind": "wheel", "url": str(_wheel(tmp_path, pkg))}))
    assert not any(c[0] == "install" for c in pip_calls)


def test_a_wheel_that_differs_from_its_url_sha256_is_refused(
    tmp_path: Path, pip_calls: list[list[str]]
) -> None:
    url = _wheel(tmp_path).as_uri() + "#sha256=" + "0" * 64
    with pytest.raises(InstallError, match="does not match the sha256"):
        install(ENV, catalogue=_catalogue({"kind": "wheel", "url": url}))
    assert not any(c[0] == "install" for c in pip_calls)


# -- 5. https only, redirects guarded ---------------------------------------------------------
@pytest.fixture
def redirector(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """A loopback server: /to?X answers 302 to X, anything else is served from ``tmp_path``."""
    seen: dict[str, str] = {}

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a: object, **kw: object) -> None:
            super().__init__(*a, directory=str(tmp_path), **kw)  # type: ignore[arg-type]

        def do_GET(self) -> None:
            seen["authorization"] = seen[self.path] = self.headers.get("Authorization", "")
            if self.path.startswith("/to?"):
                self.send_response(302)
                self.send_header("Location", self.path[4:])
                self.end_headers()
                return
            super().do_GET()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()


@pytest.mark.parametrize("target", ["http://catalogue.invalid/cat.json", "ftp://127.0.0.1:1/cat.json"])
def test_a_catalogue_redirect_off_the_rules_is_refused(
    redirector: tuple[str, dict[str, str]], target: str
) -> None:
    base, _ = redirector
    with pytest.raises(UsageError, match="redirects to"):
        read_catalogue(f"{base}/to?{target}")


def test_a_redirect_away_from_https_is_refused_even_to_loopback() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/down":
            return httpx.Response(302, headers={"Location": "http://127.0.0.1/cat.json"})
        if request.url.path == "/across":
            return httpx.Response(302, headers={"Location": "https://cdn.example/c.json"})
        return httpx.Response(200, content=b"{}")

    transport = httpx.MockTransport(answer)
    with pytest.raises(InsecureURLError, match="away from https"):
        open_url(
            "https://hub.example/down", what="catalogue", timeout=5, allow_insecure=True, transport=transport
        )
    # negative case: https to https is followed
    with open_url("https://hub.example/across", what="catalogue", timeout=5, transport=transport) as resp:
        assert resp.url == "https://cdn.example/c.json" and resp.read() == b"{}"


def test_the_hub_client_refuses_plain_http_and_guards_redirects(
    redirector: tuple[str, dict[str, str]],
) -> None:
    base, seen = redirector
    with pytest.raises(InsecureURLError, match="plain http"):
        hub_request("http://hub.invalid", "/api/v1/whoami", token="vh_secret")  # refused before connecting
    with pytest.raises(InsecureURLError, match="redirects to"):
        hub_request(base, "/to?http://hub.invalid/api", token="vh_secret")


def test_the_hub_token_is_not_repeated_to_a_redirect_target(
    redirector: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    base, seen = redirector
    (tmp_path / "x.json").write_text('{"ok": true}')
    assert hub_request(base, f"/to?{base}/x.json", token="vh_secret") == {"ok": True}
    assert seen["/to?" + base + "/x.json"] == "Bearer vh_secret"  # the hub itself got it
    assert seen["/x.json"] == ""  # where it redirected to did not


def test_download_sends_url_credentials_once_and_checks_the_pin(
    redirector: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    base, seen = redirector
    (tmp_path / "f.whl").write_bytes(b"wheel")
    good = hashlib.sha256(b"wheel").hexdigest()
    host = base.removeprefix("http://")
    out = tmp_path / "out"
    out.mkdir()
    got = download(
        f"http://__token__:s3cret@{host}/f.whl#sha256={good}", out, what="wheel", timeout=5, max_bytes=99
    )
    assert got.read_bytes() == b"wheel"
    assert seen["authorization"] == "Basic " + base64.b64encode(b"__token__:s3cret").decode()
    with pytest.raises(UsageError, match="does not match the sha256") as err:
        download(
            f"http://__token__:s3cret@{host}/f.whl#sha256={'0' * 64}",
            out,
            what="wheel",
            timeout=5,
            max_bytes=99,
        )
    assert "s3cret" not in str(err.value)


def test_a_remote_catalogue_cannot_install_from_local_files(
    tmp_path: Path, redirector: tuple[str, dict[str, str]]
) -> None:
    base, _ = redirector
    sources = {
        "a_path": {"kind": "path", "path": "/home/me/secret"},
        "a_file": {"kind": "wheel", "url": "file:///tmp/x-1-py3-none-any.whl"},
        "a_git": {"kind": "git", "url": "file:///srv/repo", "commit": "abcdef1"},
        "fine": {"kind": "wheel", "url": "https://example.org/f-1-py3-none-any.whl"},
    }
    envs = [{"id": k, "version": "1", "install": v} for k, v in sources.items()]
    (tmp_path / "cat.json").write_text(json.dumps({"schema_version": 1, "environments": envs}))
    cat = read_catalogue(f"{base}/cat.json")
    assert [e.id for e in cat.environments] == ["fine"]
    assert sum("this machine's files" in p for p in cat.problems) == 3


def test_a_git_source_cannot_run_a_command_through_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's ext:: transport runs a command; a user config that allows it must not let a catalogue
    entry use it (verihub allows https, http, ssh, git and file only)."""
    marker = tmp_path / "ran"
    config = tmp_path / "gitconfig"
    config.write_text('[protocol "ext"]\n\tallow = always\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    source = {"kind": "git", "url": f"ext::sh -c touch% {marker}", "commit": "abcdef1"}
    with pytest.raises(InstallError, match="git failed"):
        install(ENV, catalogue=_catalogue(source))
    assert not marker.exists()


def test_a_catalogue_off_loopback_cannot_point_installs_at_loopback() -> None:
    """A remote catalogue may not make this machine fetch from its own local services; the hub's
    catalogue on loopback listing its own loopback wheels stays fine (the negative case)."""
    from hub.registry.catalogue import without_local_sources

    def listed(origin: str) -> list[str]:
        entries = [
            CatalogueEntry.model_validate(
                {
                    "id": "a_loop",
                    "version": "1",
                    "install": {"kind": "wheel", "url": url},
                    "catalogue": origin,
                }
            )
            for url in ("http://127.0.0.1:8000/files/x/f-1-py3-none-any.whl",)
        ]
        return [e.id for e in without_local_sources(Catalogue(environments=entries)).environments]

    assert listed("https://cat.example/verihub.json") == []
    assert listed("http://127.0.0.1:8000/api/v1/catalogue.json") == ["a_loop"]


@pytest.mark.parametrize(
    "path",
    [
        "@evil.example/f-0.1.0-py3-none-any.whl",  # https://hub@evil.example/...: the token to another host
        "//evil.example/f-0.1.0-py3-none-any.whl",
        "/files/../../f-0.1.0-py3-none-any.whl",
    ],
)
def test_the_hub_installer_fetches_wheels_from_the_hub_only(
    monkeypatch: pytest.MonkeyPatch, pip_calls: list[list[str]], path: str
) -> None:
    """The wheel URL comes from the hub's answer; joined to the hub URL it must stay on the hub,
    since the download carries the token."""
    import hub.client.install as installer

    info = {
        "ref": "alice/vh_probe",
        "offered": ["0.1.0"],
        "versions": [
            {
                "version": "0.1.0",
                "yanked": False,
                "state": "passed",
                "content_hash": "sha256:" + "0" * 64,
                "files": [{"kind": "wheel", "url": path, "sha256": "0" * 64}],
            }
        ],
    }
    monkeypatch.setattr(installer, "hub_request", lambda *a, **kw: info)
    fetched: list[str] = []
    monkeypatch.setattr(sources, "download", lambda url, *a, **kw: fetched.append(url))
    with pytest.raises(UsageError, match="not a file on the hub"):
        installer.install_from_hub("alice/vh_probe", hub="https://hub.example", token="vh_secret")
    assert fetched == []


def test_a_wheel_url_is_downloaded_by_verihub_then_installed_as_a_file(
    tmp_path: Path,
    redirector: tuple[str, dict[str, str]],
    pip_calls: list[list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What install_from_hub does: a loopback URL with a token and the file's sha256; pip sees
    only the verified local file, never the URL."""
    base, seen = redirector
    _installed_as(monkeypatch, f"{PKG}:load_environment")
    wheel = _wheel(tmp_path)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    url = f"http://__token__:vh_secret@{base.removeprefix('http://')}/{wheel.name}#sha256={digest}"
    result = install(ENV, catalogue=_catalogue({"kind": "wheel", "url": url}))
    assert result.wheel_sha256 == digest
    assert seen[f"/{wheel.name}"] == "Basic " + base64.b64encode(b"__token__:vh_secret").decode()
    (call,) = [c for c in pip_calls if c[0] == "install"]
    assert call[-1].endswith(wheel.name) and not call[-1].startswith("http")
    with pytest.raises(InstallError, match="does not match the sha256"):
        install(ENV, catalogue=_catalogue({"kind": "wheel", "url": url[:-64] + "0" * 64}))
