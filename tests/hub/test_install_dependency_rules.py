"""Dependencies are reviewed like the environment: no direct URLs, no ``.pth``, nothing unchecked.

An environment wheel whose ``Requires-Dist`` names a URL or a VCS reference is refused by the
rules every reader uses (check, submit, publish, install); a dependency wheel that carries a
``.pth`` (code run at every interpreter start) is refused before pip installs anything. Each
hostile wheel has a clean twin that passes.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

import pytest

from hub.registry.deps import fetch_dependencies
from hub.registry.sources import InstallError
from hub.registry.wheels import WheelError, verify_dependency, verify_wheel

ENV = "vh_depprobe"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def wheel(folder: Path, dist: str, files: dict[str, bytes], requires: tuple[str, ...] = ()) -> Path:
    """A hand-made wheel ``dist``-0.1.0 with ``files`` and ``Requires-Dist`` lines (RECORD right)."""
    norm = dist.replace("-", "_")
    info = f"{norm}-0.1.0.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires
    )
    files = {
        **files,
        f"{info}/METADATA": meta.encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    lines = [_record_line(n, d) for n, d in files.items()] + [f"{info}/RECORD,,"]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{norm}-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for member, data in files.items():
            zf.writestr(member, data)
        zf.writestr(f"{info}/RECORD", "\n".join(lines) + "\n")
    return path


def env_wheel(folder: Path, requires: tuple[str, ...]) -> Path:
    pkg = "verihub_vh_depprobe"
    files = {
        f"{pkg}/__init__.py": b"def load_environment():\n    raise RuntimeError('not for this test')\n",
        "verihub_vh_depprobe-0.1.0.dist-info/entry_points.txt": (
            f"[verihub.environments]\n{ENV} = {pkg}:load_environment\n".encode()
        ),
    }
    return wheel(folder, "verihub-vh-depprobe", files, requires)


@pytest.mark.parametrize(
    ("requires", "refused"),
    [
        ("vhdep @ https://example.org/vhdep-0.1.0-py3-none-any.whl", True),
        ("vhdep @ git+https://example.org/vhdep.git@main", True),
        ("vhdep @ file:///tmp/vhdep", True),
        ("vhdep>=0.1", False),
        ('vhdep; python_version >= "3"', False),
    ],
)
def test_direct_url_dependencies_are_refused(tmp_path: Path, requires: str, refused: bool) -> None:
    path = env_wheel(tmp_path, (requires,))
    if refused:
        with pytest.raises(WheelError, match="direct URL or VCS"):
            verify_wheel(str(path), env_id=ENV)
    else:
        assert verify_wheel(str(path), env_id=ENV).env_id == ENV


@pytest.mark.parametrize(
    ("member", "refused"),
    [
        ("vhdep_hook.pth", True),
        ("vhdep-0.1.0.data/purelib/vhdep_hook.pth", True),
        ("vhdep/data/notes.pth", False),  # inside the package: site never reads it
        ("vhdep/extra.py", False),
    ],
)
def test_a_dependency_with_a_pth_file_is_refused(tmp_path: Path, member: str, refused: bool) -> None:
    path = wheel(tmp_path, "vhdep", {"vhdep/__init__.py": b"", member: b"import os\n"})
    if refused:
        with pytest.raises(WheelError, match=r"\.pth"):
            verify_dependency(str(path))
    else:
        assert verify_dependency(str(path)) == "vhdep"


def test_a_dependency_with_a_direct_url_dependency_is_refused(tmp_path: Path) -> None:
    path = wheel(tmp_path, "vhdep", {"vhdep/__init__.py": b""}, ("evil @ https://example.org/evil.whl",))
    with pytest.raises(WheelError, match="direct URL"):
        verify_dependency(str(path))


@pytest.mark.parametrize("hostile", [True, False])
def test_install_verifies_each_dependency_before_pip_installs(tmp_path: Path, hostile: bool) -> None:
    """pip resolves the environment's dependency from a local index; the hostile one (a .pth)
    is refused by the dependency check, the clean one is handed back for pip to install."""
    index = tmp_path / "index"
    extra = {"vhdep_hook.pth": b"import os\n"} if hostile else {}
    wheel(index, "vhdep", {"vhdep/__init__.py": b"", **extra})
    env = env_wheel(tmp_path / "env", ("vhdep",))
    args = ["--no-index", "--find-links", str(index)]
    if hostile:
        with pytest.raises(InstallError, match=r"\.pth"):
            fetch_dependencies(env, "verihub-vh-depprobe", tmp_path / "deps", args)
    else:
        got = fetch_dependencies(env, "verihub-vh-depprobe", tmp_path / "deps", args)
        assert [p.name for p in got] == ["vhdep-0.1.0-py3-none-any.whl"]


def test_dependencies_resolve_as_wheels_only(tmp_path: Path) -> None:
    """A dependency released only as an sdist is not resolved (pip would run its setup.py)."""
    index = tmp_path / "index"
    index.mkdir()
    (index / "vhdep-0.1.0.tar.gz").write_bytes(b"not even a tarball")
    env = env_wheel(tmp_path / "env", ("vhdep",))
    with pytest.raises(InstallError, match="resolving the dependencies"):
        fetch_dependencies(
            env, "verihub-vh-depprobe", tmp_path / "deps", ["--no-index", "--find-links", str(index)]
        )
