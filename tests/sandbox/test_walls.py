"""The sandbox's walls, attacked from inside with ctypes (which an audit hook does not see).

Every attack is parametrised with ``sandboxed``: True runs it in the sandbox, where it must be
refused; False runs the same script with ``unsafe=True`` (no sandbox, same limits), where it
must succeed. The unsandboxed case shows that each test can fail: the script really does what
it claims when nothing stops it.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import uuid
from pathlib import Path

import pytest

from hub.sandbox import Limits, run, unavailable_reason

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason())),
]

ROOT = os.geteuid() == 0
LIBC = "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"


def _run(code: str, sandboxed: bool, tmp_path: Path, **limits: object) -> tuple[int, str, str]:
    lim = Limits(wall_s=30.0, cpu_s=30, **limits)  # type: ignore[arg-type]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    proc = run([sys.executable, "-c", code], limits=lim, unsafe=not sandboxed, env=env, cwd=None)
    return proc.returncode, proc.stdout, proc.stderr


AS_ROOT = pytest.mark.skipif(not ROOT, reason="mounting needs root outside a sandbox")


@pytest.mark.parametrize("sandboxed", [True, pytest.param(False, marks=AS_ROOT)])
def test_mount_is_refused(sandboxed: bool, tmp_path: Path) -> None:
    target = tmp_path / "mnt"
    target.mkdir()
    code = LIBC + (
        f"r = libc.mount(b'none', b'{target}', b'tmpfs', 0, None)\n"
        "print('mounted' if r == 0 else 'refused', os.strerror(ctypes.get_errno()))\n"
        f"r == 0 and libc.umount2(b'{target}', 0)\n"
    )
    _code, out, err = _run(code, sandboxed, tmp_path)
    assert ("refused" if sandboxed else "mounted") in out, err


@pytest.mark.parametrize("sandboxed", [True, False])
def test_namespace_escapes_are_refused(sandboxed: bool, tmp_path: Path) -> None:
    """unshare (a new user namespace would give back capabilities), and clone with a namespace
    flag, fail with EPERM under the seccomp filter (and --disable-userns)."""
    code = LIBC + (
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os._exit(0 if libc.unshare(0x10000000) == 0 else 1)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "print('unshared' if os.waitstatus_to_exitcode(status) == 0 else 'refused')\n"
    )
    _code, out, err = _run(code, sandboxed, tmp_path)
    assert ("refused" if sandboxed else "unshared") in out, err


@pytest.mark.parametrize("sandboxed", [True, False])
def test_host_files_are_absent(sandboxed: bool, tmp_path: Path) -> None:
    """A private key and another checkout's file, read with libc's open/read: not there."""
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY----- not-for-the-package")
    code = LIBC + (
        "buf = ctypes.create_string_buffer(200)\n"
        f"fd = libc.open(b'{secret}', 0)\n"
        "n = libc.read(fd, buf, 200) if fd >= 0 else -1\n"
        "print(buf.raw[:max(n, 0)].decode() if n > 0 else 'absent', os.strerror(ctypes.get_errno()))\n"
        "fd2 = libc.open(b'/etc/shadow', 0)\n"
        "print('shadow', 'read' if fd2 >= 0 else 'absent')\n"
    )
    _code, out, err = _run(code, sandboxed, tmp_path)
    assert ("PRIVATE KEY" in out) is not sandboxed, out + err
    if sandboxed:
        assert "shadow absent" in out


@pytest.mark.parametrize("sandboxed", [True, False])
def test_host_unix_socket_is_unreachable(sandboxed: bool, tmp_path: Path) -> None:
    path = str(tmp_path / "service.sock")
    got: list[bytes] = []
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(5)
    srv.settimeout(10)

    def serve() -> None:
        try:
            conn, _ = srv.accept()
            got.append(conn.recv(100))
            conn.close()
        except OSError:
            pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    code = LIBC + (
        "import struct\n"
        "s = libc.socket(1, 1, 0)\n"
        f"p = b'{path}'\n"
        "addr = struct.pack('H', 1) + p + bytes(108 - len(p))\n"
        "ok = libc.connect(s, addr, len(addr)) == 0\n"
        "ok and libc.write(s, b'answers?', 8)\n"
        "print('connected' if ok else 'refused', os.strerror(ctypes.get_errno()))\n"
    )
    try:
        _code, out, err = _run(code, sandboxed, tmp_path)
    finally:
        srv.close()
        t.join(timeout=5)
    assert ("refused" if sandboxed else "connected") in out, out + err
    assert (got == []) is sandboxed


@pytest.mark.parametrize("sandboxed", [True, False])
def test_root_powers_are_gone(sandboxed: bool, tmp_path: Path) -> None:
    code = (
        "import os\n"
        "keys = ('CapEff', 'NoNewPrivs', 'Seccomp:')\n"
        "caps = [line for line in open('/proc/self/status') if line.startswith(keys)]\n"
        "print(os.getuid(), os.getgid(), *[c.split()[1] for c in caps])\n"
    )
    _code, out, err = _run(code, sandboxed, tmp_path)
    uid, gid, cap_eff, no_new_privs, seccomp = out.split()
    if sandboxed:
        assert (uid, gid, cap_eff, no_new_privs, seccomp) == ("65534", "65534", "0" * 16, "1", "2"), out
    else:
        assert seccomp == "0" and no_new_privs == "0"


@pytest.mark.parametrize(("processes", "killed"), [(32, True), (256, False)])
def test_fork_bomb_kills_the_whole_sandbox(processes: int, killed: bool, tmp_path: Path) -> None:
    """100 sleeping children: past the limit the sandbox holds. The supervisor kills every
    process, or (the sandbox has a uid of its own, so ``RLIMIT_NPROC`` counts) the kernel refuses
    the fork first; whichever comes first, nothing survives."""
    code = (
        "import os, time\n"
        "for i in range(100):\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(3); os._exit(0)\n"
        "time.sleep(3); print('survived')\n"
    )
    rc, out, err = _run(code, True, tmp_path, processes=processes)
    held = "killed: processes" in err or "BlockingIOError" in err  # the supervisor, or RLIMIT_NPROC
    assert held is killed, err
    assert ("survived" in out) is not killed


@pytest.mark.parametrize(("memory_mb", "killed"), [(400, True), (4096, False)])
def test_memory_is_summed_over_processes(memory_mb: int, killed: bool, tmp_path: Path) -> None:
    """8 processes with 80 MiB each: each is far below the limit, together they are not."""
    code = (
        "import os, time\n"
        "kids = []\n"
        "for i in range(8):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        b = bytearray(80 * 2**20); time.sleep(2); os._exit(0)\n"
        "    kids.append(pid)\n"
        "for k in kids: os.waitpid(k, 0)\n"
        "print('survived')\n"
    )
    rc, out, err = _run(code, True, tmp_path, memory_mb=memory_mb)
    assert ("killed: memory" in err) is killed, err
    assert ("survived" in out) is not killed


@pytest.mark.parametrize("sandboxed", [True, False])
def test_dev_shm_leaves_nothing_behind(sandboxed: bool, tmp_path: Path) -> None:
    name = f"verihub-test-{uuid.uuid4().hex}"
    code = f"open('/dev/shm/{name}', 'wb').write(b'x' * (8 * 2**20)); print('written')\n"
    try:
        _code, out, err = _run(code, sandboxed, tmp_path)
        assert "written" in out, err
        assert os.path.exists(f"/dev/shm/{name}") is not sandboxed
    finally:
        Path(f"/dev/shm/{name}").unlink(missing_ok=True)


@pytest.mark.parametrize(("disk_mb", "refused"), [(16, True), (256, False)])
def test_run_directory_and_tmp_are_size_capped(disk_mb: int, refused: bool, tmp_path: Path) -> None:
    code = (
        "import os\n"
        "for where in (os.getcwd(), '/tmp'):\n"
        "    n = 0\n"
        "    try:\n"
        "        with open(os.path.join(where, 'flood'), 'wb') as fh:\n"
        "            for _ in range(64):\n"
        "                fh.write(b'x' * 2**20); fh.flush(); n += 1\n"
        "    except OSError as e:\n"
        "        print(where, 'refused after', n, 'MiB', e.errno)\n"
        "    else:\n"
        "        print(where, 'wrote', n, 'MiB')\n"
    )
    _code, out, err = _run(code, True, tmp_path, disk_mb=disk_mb)
    assert out.count("refused after") == (2 if refused else 0), out + err


@pytest.mark.parametrize(("disk_mb", "capped"), [(16, True), (256, False)])
def test_writable_host_folder_is_size_capped_at_write_time(
    disk_mb: int, capped: bool, tmp_path: Path
) -> None:
    """The one host folder a build may write (``rw_dir``) is a size-capped tmpfs inside: 8
    parallel writers of 24 MiB each get ENOSPC at the cap (no poll to outrun), and the host
    folder receives no more than the cap."""
    area = tmp_path / "area"
    area.mkdir()
    (area / "input.txt").write_text("given")
    code = (
        "import os\n"
        "assert open('input.txt').read() == 'given'\n"
        "kids = []\n"
        "for i in range(8):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        try:\n"
        "            with open(f'flood{i}', 'wb') as fh:\n"
        "                for _ in range(24): fh.write(b'x' * 2**20); fh.flush()\n"
        "        except OSError as e:\n"
        "            os.write(1, b'refused\\n')\n"
        "        os._exit(0)\n"
        "    kids.append(pid)\n"
        "for k in kids: os.waitpid(k, 0)\n"
        "os.unlink('flood0')\n"  # room for the last word
        "open('done.txt', 'w').write('ok')\n"
    )
    proc = run(
        [sys.executable, "-c", code],
        rw_dir=area,
        cwd=area,
        limits=Limits(wall_s=60.0, cpu_s=60, disk_mb=disk_mb),
    )
    held = sum(f.stat().st_size for f in area.iterdir() if f.is_file())
    assert (area / "done.txt").read_text() == "ok", proc.stderr
    assert ("refused" in proc.stdout) is capped, proc.stdout + proc.stderr
    assert (held <= disk_mb * 2**20) if capped else held >= 7 * 24 * 2**20


def test_environment_is_scrubbed_and_fds_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the variables given reach the sandbox, and no descriptor but stdio is inherited."""
    monkeypatch.setenv("VERIHUB_BENCH_KEY", "sk-secret")
    r, w = os.pipe()
    os.set_inheritable(r, True)
    try:
        code = (
            "import os; print(sorted(os.environ))\nprint(sorted(int(f) for f in os.listdir('/proc/self/fd')))"
        )
        proc = run([sys.executable, "-c", code], env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    finally:
        os.close(r)
        os.close(w)
    names, fds = proc.stdout.splitlines()
    assert "VERIHUB_BENCH_KEY" not in names and "HOME" not in names, names
    assert json.loads(fds) == [0, 1, 2, 3]  # 3 is listdir's own descriptor


def test_output_flood_stays_bounded_outside(tmp_path: Path) -> None:
    """200 MiB on stdout without a newline: the caller gets the last MiB, not all of it (the
    files it goes to are capped by RLIMIT_FSIZE, and only their tail is read back)."""
    code = (
        "import os, sys\nfor _ in range(200): os.write(1, b'x' * 2**20)\nsys.stderr.write('wrote 200 MiB')\n"
    )
    proc = run([sys.executable, "-c", code], limits=Limits(wall_s=60.0, cpu_s=60, file_mb=256))
    assert "wrote 200 MiB" in proc.stderr, proc.stderr[-300:]
    assert 0 < len(proc.stdout) <= 2**20
