"""A sandbox started by root does not run its command as host root: the host sees another uid,
a root-owned file with mode 600 on a bound path stays unreadable, and no capability, group or
way back is left. Run unsandboxed, the same script reads the file, so the test can fail."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from hub.sandbox import Limits, unavailable_reason
from hub.sandbox.process import SandboxProcess, run
from hub.sandbox.userns import HOST_ID_BASE

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason())),
    pytest.mark.skipif(os.geteuid() != 0, reason="only a supervisor running as root can be host root"),
]

PROBE = (
    "import os, sys\n"
    "status = {k: v.split() for k, v in (l.split(':', 1) for l in open('/proc/self/status'))}\n"
    "print(os.getuid(), os.getgid(), os.getgroups(), status['CapEff'][0], status['CapBnd'][0],"
    " status['CapInh'][0], status['NoNewPrivs'][0])\n"
    "try:\n"
    "    print('READ', open(sys.argv[1]).read())\n"
    "except PermissionError:\n"
    "    print('REFUSED')\n"
)


def _secret(tmp_path: Path) -> Path:
    folder = tmp_path / "bound"
    folder.mkdir()
    folder.chmod(0o755)
    secret = folder / "secret"
    secret.write_text("root only", encoding="utf-8")
    secret.chmod(0o600)
    assert secret.stat().st_uid == 0
    return secret


@pytest.mark.parametrize("sandboxed", [True, False])
def test_a_root_only_file_on_a_bound_path_is_unreadable(sandboxed: bool, tmp_path: Path) -> None:
    secret = _secret(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    proc = run(
        [sys.executable, "-c", PROBE, str(secret)],
        limits=Limits(wall_s=60.0, cpu_s=30),
        ro_binds=[secret.parent],
        env=env,
        unsafe=not sandboxed,
    )
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.splitlines()
    if sandboxed:
        uid, gid, groups, cap_eff, cap_bnd, cap_inh, nnp = first.split(" ", 6)[:7]
        assert (uid, gid, groups) == ("65534", "65534", "[]"), first
        assert {cap_eff, cap_bnd, cap_inh} == {"0" * 16} and nnp == "1", first
        assert second == "REFUSED", proc.stdout
    else:
        assert first.startswith("0 0 ") and second == "READ root only", proc.stdout


def test_the_host_sees_an_unprivileged_uid(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin"}
    with SandboxProcess(
        [sys.executable, "-c", "import time; time.sleep(20)"], limits=Limits(wall_s=60.0), env=env
    ) as box:
        deadline = time.monotonic() + 30
        seen: set[int] = set()
        while time.monotonic() < deadline and not any(u >= HOST_ID_BASE for u in seen):
            for pid in _tree(box.proc.pid):
                try:
                    with open(f"/proc/{pid}/status") as fh:
                        line = next(x for x in fh if x.startswith("Uid:"))
                    if "python" in Path(f"/proc/{pid}/exe").resolve().name:
                        seen.add(int(line.split()[1]))
                except (OSError, StopIteration):
                    continue
            time.sleep(0.05)
        box.kill()
    assert seen and all(u >= HOST_ID_BASE for u in seen), seen


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(c) for c in fh.read().split()]
        except OSError:
            continue
    return out
