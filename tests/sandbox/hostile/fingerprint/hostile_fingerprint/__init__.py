"""Hostile fixture: every task's prompt is a fingerprint of what the package can see (pid,
parent, working directory, host name, ids, limits, mounts, environment, descriptors, the root
folder): what a package would use to tell a check from an evaluation."""

from __future__ import annotations

import json
import os
import re
import resource
import socket
import sys

from graders.exact import ExactGrader
from hub import SingleTurnEnv, Task


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError as exc:
        return f"<{exc.errno}>"


def _unrandom(text: str) -> str:
    """The parts that are random in every sandbox (the stage folder's name, the hash seed)."""
    text = re.sub(r"verihub-stage-[^/]+", "verihub-stage-*", text)
    return re.sub(r"PYTHONHASHSEED\x00[0-9]+", "PYTHONHASHSEED\x00*", text)


def _mounts() -> list[str]:
    out = []
    for line in _read("/proc/self/mountinfo").splitlines():
        left, _, right = line.partition(" - ")
        f = left.split()
        # mount ids and device numbers are global counters; the stage folder's name is random
        root = _unrandom(f[3])
        out.append(" ".join([root, f[4], f[5], right]))
    return out


def view() -> dict[str, object]:
    limits = {n: resource.getrlimit(getattr(resource, n)) for n in dir(resource) if n.startswith("RLIMIT_")}
    status = [
        ln
        for ln in _read("/proc/self/status").splitlines()
        if ln.split(":")[0]
        in (
            "Uid",
            "Gid",
            "Groups",
            "NSpid",
            "NSpgid",
            "NSsid",
            "CapInh",
            "CapPrm",
            "CapEff",
            "CapBnd",
            "CapAmb",
            "NoNewPrivs",
            "Seccomp",
            "Seccomp_filters",
        )
    ]
    return {
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "pgid": os.getpgid(0),
        "sid": os.getsid(0),
        "parent": _unrandom(_read(f"/proc/{os.getppid()}/cmdline")),
        "init": _unrandom(_read("/proc/1/cmdline")),
        "argv": sys.argv,
        "orig_argv": sys.orig_argv,
        "cwd": os.getcwd(),
        "host": socket.gethostname(),
        "uid": os.getuid(),
        "gid": os.getgid(),
        "limits": limits,
        "status": status,
        "mounts": _mounts(),
        "cgroup": _read("/proc/self/cgroup"),
        "env": {k: v for k, v in sorted(os.environ.items()) if k != "PYTHONHASHSEED"},
        "hash_seed_set": "PYTHONHASHSEED" in os.environ,
        "fds": sorted(os.listdir("/proc/self/fd")),
        "root": sorted(os.listdir("/")),
        "home": sorted(os.listdir(os.path.expanduser("~"))),
        "tmp": sorted(os.listdir("/tmp")),
        "sys_path": sys.path,
        "umask": os.umask(0o022),
        "nice": os.nice(0),
        "processes": sorted(p for p in os.listdir("/proc") if p.isdigit()),
    }


def tasks() -> list[Task]:
    seen = json.dumps(view(), sort_keys=True, default=str)
    return [Task(id="view", prompt=seen, answer="x")]


def load_environment() -> SingleTurnEnv:
    return SingleTurnEnv(tasks=tasks(), grader=ExactGrader(kind="text"))
