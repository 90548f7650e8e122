"""Memory that no process's resident set shows is refused or counted.

``memfd_create`` and System V segments are refused by the seccomp filter; files in the
sandbox's tmpfs folders count towards ``memory_mb``; ``/dev`` holds device nodes only and is not
writable. Each attack runs sandboxed (refused) and, where it can, unsandboxed (it works), so
the test can fail. Memory tests use a few hundred MiB against a lowered limit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hub.sandbox import Limits, run, unavailable_reason
from hub.sandbox.cgroup import delegated_root, open_group

SANDBOX = pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
LIBC = "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"


def _run(code: str, sandboxed: bool, tmp_path: Path, **limits: object) -> tuple[int, str, str]:
    lim = Limits(wall_s=60.0, cpu_s=60, **limits)  # type: ignore[arg-type]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    proc = run([sys.executable, "-c", code], limits=lim, unsafe=not sandboxed, env=env)
    return proc.returncode, proc.stdout, proc.stderr


@SANDBOX
@pytest.mark.sandbox
@pytest.mark.parametrize("sandboxed", [True, False])
def test_memfd_create_is_refused(sandboxed: bool, tmp_path: Path) -> None:
    code = (
        "import os\n"
        "try:\n"
        "    fd = os.memfd_create('ballast')\n"
        "    os.write(fd, b'x' * 2**20)\n"
        "    print('memfd held')\n"
        "except OSError as e:\n"
        "    print('refused', e.errno)\n"
    )
    _rc, out, err = _run(code, sandboxed, tmp_path)
    assert ("refused" if sandboxed else "memfd held") in out, out + err


@SANDBOX
@pytest.mark.sandbox
@pytest.mark.parametrize("sandboxed", [True, False])
def test_system_v_shared_memory_is_refused(sandboxed: bool, tmp_path: Path) -> None:
    code = LIBC + (
        "shmid = libc.shmget(0, 2**20, 0o1600)\n"  # IPC_PRIVATE, IPC_CREAT | 0600
        "print('segment' if shmid >= 0 else 'refused', os.strerror(ctypes.get_errno()))\n"
        "shmid >= 0 and libc.shmctl(shmid, 0, None)\n"  # IPC_RMID
    )
    _rc, out, err = _run(code, sandboxed, tmp_path)
    assert ("refused" if sandboxed else "segment") in out, out + err


@SANDBOX
@pytest.mark.sandbox
def test_dev_is_device_nodes_only_and_read_only(tmp_path: Path) -> None:
    code = (
        "import json, os\n"
        "print(json.dumps(sorted(os.listdir('/dev'))))\n"
        "try:\n"
        "    open('/dev/ballast', 'wb').write(b'x')\n"
        "    print('wrote /dev')\n"
        "except OSError as e:\n"
        "    print('refused', e.errno)\n"
        "print(len(open('/dev/urandom', 'rb').read(16)), open('/dev/null', 'wb').write(b'ok'))\n"
    )
    _rc, out, err = _run(code, True, tmp_path)
    listing, verdict, works = out.splitlines()
    assert set(json.loads(listing)) <= {
        "null",
        "zero",
        "full",
        "random",
        "urandom",
        "shm",
        "fd",
        "stdin",
        "stdout",
        "stderr",
    }  # noqa: S307 (our own print)
    assert verdict.startswith("refused"), out + err
    assert works == "16 2"


@SANDBOX
@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize(("memory_mb", "killed"), [(160, True), (1024, False)])
def test_files_in_tmpfs_count_as_memory(memory_mb: int, killed: bool, tmp_path: Path) -> None:
    """300 MiB written to the sandbox's /tmp (sized 512 MiB): no process holds it resident."""
    code = (
        "import time\n"
        "with open('/tmp/ballast', 'wb') as fh:\n"
        "    for _ in range(300): fh.write(b'x' * 2**20)\n"
        "time.sleep(2)\n"
        "print('survived')\n"
    )
    _rc, out, err = _run(code, True, tmp_path, memory_mb=memory_mb, disk_mb=512, file_mb=512)
    assert ("killed: memory" in err) is killed, err[-500:]
    assert ("survived" in out) is not killed


def test_a_delegated_cgroup_gets_the_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder standing in for a delegated cgroup v2 group: the sandbox's group is made in it
    with memory.max (shared memory counted by the kernel) and pids.max; one without the
    controllers enabled for children is not used."""
    (tmp_path / "cgroup.subtree_control").write_text("cpu io\n")
    monkeypatch.setenv("VERIHUB_SANDBOX_CGROUP", str(tmp_path))
    assert delegated_root() is None
    (tmp_path / "cgroup.subtree_control").write_text("cpu io memory pids\n")
    assert delegated_root() == tmp_path
    group = open_group(300 * 2**20, 64)
    assert group is not None
    assert (group.path / "memory.max").read_text() == str(300 * 2**20)
    assert (group.path / "pids.max").read_text() == "64"
    assert group.path.parent == tmp_path
