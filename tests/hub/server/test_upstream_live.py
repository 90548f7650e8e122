"""Installing with only the hub's URL, for real: a loopback pypiserver as the upstream index, a
real ``verihub hub serve`` redirecting to it, arith pushed and reviewed, then pip in a fresh
virtualenv with no other index (``PIP_CONFIG_FILE=/dev/null``).

verihub's own dependency tree (datasets, matplotlib, ...) is too heavy to mirror on loopback,
so by default the test takes the two halves of one install apart: the hub serves ``verihub-arith`` and the
``verihub`` wheel it runs (hash as on the page), and pip follows the redirect of a name the hub
does not host to the upstream, dependencies included (two small wheels made here). Given a
folder of verihub's dependencies (``HUBTEST_WHEELHOUSE=DIR``, filled with ``pip download -d DIR``
of the base dependencies), the upstream serves it too and the test also installs
``verihub-arith`` whole, from the hub's URL alone, and loads the environment.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hub.server.test_server_live import Server, _cli, _tokens
from tests.venvs import child_venv

pytestmark = pytest.mark.slow
WHEELHOUSE = os.environ.get("HUBTEST_WHEELHOUSE", "")


def _pip_env() -> dict[str, str]:
    """pip and the fresh virtualenv's Python see nothing of this checkout or of the machine's pip
    configuration (its mirrors): only the index they are given."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("PIP_")}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def _wheel(folder: Path, name: str, requires: list[str]) -> Path:
    """A minimal pure-Python wheel ``name`` 1.0 with a module that says its name."""
    dist = f"{name}-1.0.dist-info"
    files = {
        f"{name}/__init__.py": f"NAME = {name!r}\n".encode(),
        f"{dist}/METADATA": "\n".join(
            [
                "Metadata-Version: 2.1",
                f"Name: {name}",
                "Version: 1.0",
                *(f"Requires-Dist: {r}" for r in requires),
            ]
        ).encode()
        + b"\n",
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    out = folder / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(out, "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
        z.writestr(f"{dist}/RECORD", "\n".join(record) + "\n")
    return out


@pytest.fixture
def pypiserver(tmp_path: Path) -> Iterator[str]:
    """pypiserver on loopback holding ``tinydep`` (which needs ``tinybase``) and ``tinybase``."""
    packages = tmp_path / "upstream"
    packages.mkdir()
    _wheel(packages, "tinybase", [])
    _wheel(packages, "tinydep", ["tinybase>=1"])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    folders = [str(packages), *([WHEELHOUSE] if WHEELHOUSE else [])]
    cmd = [sys.executable, "-m", "pypiserver", "run", "-p", str(port), "-i", "127.0.0.1", *folders]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/simple/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url, timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise AssertionError("pypiserver did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_pip_needs_only_the_hubs_url(
    pypiserver: str, arith_bundle: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, cfg = tmp_path / "hub", tmp_path / "config.toml"
    tokens = _tokens(data, cfg)
    monkeypatch.setenv("VERIHUB_HUB_UPSTREAM_INDEX", pypiserver)  # `hub serve --upstream-index`'s variable
    server = Server(data).start()
    try:
        _cli("login", "--hub", server.url, cfg=cfg, stdin=tokens["alice"] + "\n")
        assert "alice/arith@0.1.0: published" in _cli("push", str(arith_bundle.bundle), cfg=cfg).stdout
        assert server.wait_state("alice/arith", {"passed", "failed"})["state"] == "passed"
        index = f"{server.url}/simple/"
        page = urllib.request.urlopen(f"{server.url}/alice/arith").read().decode()
        assert f"pip install --index-url {index} verihub-arith" in page and pypiserver in page

        # the hub's own verihub: listed, pinned by sha256, downloadable with nothing but the hub
        own = json.loads(
            urllib.request.urlopen(
                urllib.request.Request(
                    index + "verihub/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
                )
            ).read()
        )
        assert own["versions"] == [_version()]
        listed = own["files"][0]["hashes"]["sha256"]
        py = child_venv(tmp_path / "venv", inherit=False, pip=True)
        pip = [str(py), "-m", "pip"]
        got = tmp_path / "got"
        subprocess.run(
            [
                *pip,
                "download",
                "-q",
                "--no-deps",
                "-d",
                str(got),
                "--index-url",
                index,
                "verihub-arith",
                "verihub",
            ],
            env=_pip_env(),
            check=True,
            timeout=300,
        )
        wheel = next(got.glob("verihub-0*.whl"))
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() == listed
        with zipfile.ZipFile(next(got.glob("verihub_arith-*.whl"))) as z:
            meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
            assert re.search(r"^Requires-Dist: verihub>=0\.1", z.read(meta).decode(), re.M)
        with zipfile.ZipFile(wheel) as z:
            assert "hub/server/packages/index.py" in z.namelist()  # the code the hub runs

        # a name the hub does not host: redirected upstream, and pip follows it, dependencies included
        assert _redirect(index + "tinydep/") == (302, f"{pypiserver}tinydep/")
        subprocess.run(
            [*pip, "install", "-q", "--index-url", index, "tinydep"], env=_pip_env(), check=True, timeout=300
        )
        probe = "import tinydep, tinybase; print(tinydep.NAME, tinybase.NAME)"
        assert subprocess.run(
            [str(py), "-c", probe], capture_output=True, text=True, env=_pip_env()
        ).stdout.split() == [
            "tinydep",
            "tinybase",
        ]
        if WHEELHOUSE:  # the whole install: verihub from the hub, its dependencies from upstream
            subprocess.run(
                [*pip, "install", "-q", "--index-url", index, "verihub-arith"],
                env=_pip_env(),
                check=True,
                timeout=1200,
            )
            load = (
                "import hub; from hub.registry.entrypoints import load_environment as l; "
                "print(l('arith').id, hub.__file__)"
            )
            ran = subprocess.run(
                [str(py), "-c", load], capture_output=True, text=True, cwd=tmp_path, env=_pip_env()
            )
            env_id, where = ran.stdout.split()
            assert env_id == "arith" and where.startswith(str(tmp_path / "venv")), ran.stderr
        # a push under a name the upstream has is refused, naming the prefix that is allowed
        renamed = str(_renamed(arith_bundle, "tinydep", tmp_path))
        refused = _cli("push", renamed, "--token", tokens["bob"], cfg=cfg, check=False)
        assert refused.returncode != 0 and "verihub-tinydep" in refused.stderr + refused.stdout
    finally:
        server.stop()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        return None


def _redirect(url: str) -> tuple[int, str]:
    """The status and ``Location`` of a redirect ``url`` answers (not followed)."""
    try:
        urllib.request.build_opener(_NoRedirect).open(url, timeout=10)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Location"]
    raise AssertionError(f"{url} did not redirect")


def _version() -> str:
    import tomllib

    from tests.venvs import REPO

    return str(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"])


def _renamed(built: Any, distribution: str, tmp_path: Path) -> Path:
    from tests.hub.server.conftest import make_variant

    return make_variant(built, tmp_path / "renamed", distribution=distribution)
