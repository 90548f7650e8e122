"""A throwaway PostgreSQL cluster for tests: initdb into a temporary folder, listening only on a
unix socket in that folder (no TCP), stopped and removed afterwards. As root, the cluster runs
as the unprivileged ``postgres`` user (PostgreSQL refuses to run as root)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["pg_bin", "postgres_cluster"]


def pg_bin() -> Path | None:
    """The folder holding initdb and pg_ctl (Debian's layout or PATH), or None."""
    for found in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (found / "initdb").is_file():
            return found
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


@contextmanager
def postgres_cluster() -> Iterator[str]:
    """Yields a ``postgresql://`` URL of a fresh cluster's ``postgres`` database."""
    binaries = pg_bin()
    if binaries is None:
        raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="verihub-pg-"))
    as_user: list[str] = []
    user = "postgres"
    if os.geteuid() == 0:
        pw = pwd.getpwnam("postgres")
        os.chown(root, pw.pw_uid, pw.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    else:
        user = pwd.getpwuid(os.geteuid()).pw_name
    data, sock = root / "data", root
    run = {"check": True, "capture_output": True, "timeout": 120}
    subprocess.run([*as_user, str(binaries / "initdb"), "-D", str(data), "-U", user, "-A", "trust"], **run)
    opts = f"-c listen_addresses='' -c unix_socket_directories='{sock}' -c fsync=off"
    subprocess.run(
        [
            *as_user,
            str(binaries / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            opts,
            "-w",
            "-l",
            str(root / "log"),
            "start",
        ],
        **run,
    )
    try:
        yield f"postgresql://{user}@/postgres?host={sock}"
    finally:
        subprocess.run(
            [*as_user, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            check=False,
            capture_output=True,
            timeout=120,
        )
        shutil.rmtree(root, ignore_errors=True)
