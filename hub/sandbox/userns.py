"""A user namespace in which the sandbox's user is not the host's root.

bubblewrap run by an ordinary user maps the sandbox's uid to that user. Run by root (a hub
serving as root), ``--unshare-user`` maps it to host uid 0: a file of root's with mode 600 on a
bound path is then the sandbox's own, and bubblewrap 0.8 can map no other host uid (its
``--userns`` path switches uid before it sets up, and its setgid then fails). So where the
supervisor is root, the sandbox gets a namespace made here, and bubblewrap joins it
(``--userns FD``): namespace uid 0 is host root, for bubblewrap's own setup (binds under
``/root``, mounts), and namespace uid and gid 65534, the sandbox's user, are host uid and gid
:func:`host_ids`, which nothing on the host owns. The command starts with ``setpriv`` dropping
to 65534 (no supplementary groups, no inheritable or bounding capabilities) before anything of
the package runs; bubblewrap has set ``no_new_privs``, and the seccomp filter refuses new
namespaces (``--disable-userns`` needs ``--unshare-user``).
"""

from __future__ import annotations

import itertools
import os
import subprocess

__all__ = ["HOST_ID_BASE", "drops_root", "host_ids", "open_userns", "setpriv_prefix"]

#: Host ids of sandboxes run by root are taken from ``HOST_ID_BASE`` up (one per sandbox, so
#: ``RLIMIT_NPROC``, counted per host uid, is each sandbox's own); no account owns them.
HOST_ID_BASE = 3_900_000_000
_SPAN = 10_000_000
_counter = itertools.count()


def _system(name: str) -> str | None:
    """util-linux's ``name`` from the system folders (never from ``PATH``)."""
    return next((f"{d}/{name}" for d in ("/usr/bin", "/bin") if os.access(f"{d}/{name}", os.X_OK)), None)


def drops_root() -> bool:
    """Whether sandboxes started by this process need the namespace of :func:`open_userns`."""
    return os.geteuid() == 0


def host_ids() -> int:
    """A host uid (also the gid) for the next sandbox, distinct among this process's sandboxes."""
    return HOST_ID_BASE + (os.getpid() * 1000 + next(_counter)) % _SPAN


def open_userns(sandbox_id: int, host_id: int) -> int:
    """A descriptor of a new user namespace that maps uid and gid 0 to host root and
    ``sandbox_id`` to ``host_id``; raises ``OSError`` when one cannot be made."""
    unshare = _system("unshare")
    if unshare is None:
        raise OSError("util-linux's unshare is missing: apt-get install util-linux")
    proc = subprocess.Popen(  # noqa: S603 (fixed argv)
        [unshare, "--user", "sh", "-c", "echo ready; exec cat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        if proc.stdout.readline() != b"ready\n":
            raise OSError("unshare --user did not start; user namespaces may be off")
        mapping = f"0 0 1\n{sandbox_id} {host_id} 1\n".encode()
        for name in ("uid_map", "gid_map"):
            fd = os.open(f"/proc/{proc.pid}/{name}", os.O_WRONLY)
            try:
                os.write(fd, mapping)  # one write: the kernel takes the map whole or not at all
            finally:
                os.close(fd)
        return os.open(f"/proc/{proc.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def setpriv_prefix(sandbox_id: int, userns_fd: int) -> list[str]:
    """The command prefix that closes ``userns_fd`` (bubblewrap leaves it open) and becomes
    ``sandbox_id`` for good before the command runs."""
    setpriv = _system("setpriv") or "/usr/bin/setpriv"
    ident = str(sandbox_id)
    return [
        "/bin/sh",
        "-c",
        f'exec "$@" {int(userns_fd)}<&-',
        "sh",
        setpriv,
        f"--reuid={ident}",
        f"--regid={ident}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--",
    ]
