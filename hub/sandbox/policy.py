"""What a sandbox may use: resource limits and the seccomp filter.

The filter allows every system call but the ones listed in :data:`DENIED_SYSCALLS` (they fail
with ``EPERM``), refuses ``clone`` with a namespace flag, and makes ``clone3`` fail with
``ENOSYS`` (its flags sit behind a pointer a filter cannot read; the C library then falls back
to ``clone``). It is compiled with libseccomp (through the ``pyseccomp`` bindings) into a
classic BPF program that bubblewrap installs with ``--seccomp FD`` before it runs the command.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass

__all__ = ["DENIED_SYSCALLS", "Limits", "seccomp_filter_fd"]

DENIED_SYSCALLS: tuple[str, ...] = (
    # filesystems and namespaces: the sandbox's view of the world is fixed by bubblewrap
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "open_by_handle_at",
    "name_to_handle_at",
    # other processes and the kernel
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    # memory that no process's resident set shows: memfd pages never mapped, System V segments
    # left attached to nothing (files in the size-capped tmpfs folders are counted instead)
    "memfd_create",
    "memfd_secret",
    "shmget",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "syslog",
    "acct",
    "quotactl",
    "swapon",
    "swapoff",
    "reboot",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "lookup_dcookie",
    "iopl",
    "ioperm",
    "personality",
    "uselib",
    "vhangup",
    "nfsservctl",
)

_CLONE_NAMESPACE_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
    0x00000080,  # CLONE_NEWTIME
)


@dataclass(frozen=True)
class Limits:
    """Limits of one sandbox, all processes in it together unless a field says otherwise.

    ``memory_mb``: the resident memory of every process in the sandbox summed (the supervisor
    kills the whole sandbox past it); ``processes``: processes and threads at once
    (``RLIMIT_NPROC`` inside, and the supervisor's count); ``memory_mb`` is also each
    process's address-space limit (``RLIMIT_AS``: one process alone gets a ``MemoryError``);
    ``disk_mb``: the size of the private run directory, of ``/tmp``, ``/dev/shm`` and of a
    writable folder (each a size-capped tmpfs; what they hold counts towards ``memory_mb``);
    ``cpu_s``: CPU seconds of all its processes
    (summed by the supervisor, not an rlimit the sandbox could see); ``file_mb``: per file
    (``RLIMIT_FSIZE``). ``wall_s`` and ``cpu_s`` are invisible inside; the others are the same
    for a check and an evaluation unless the user changes them.
    """

    wall_s: float = 120.0
    cpu_s: int = 120
    memory_mb: int = 4096
    processes: int = 128
    disk_mb: int = 256
    file_mb: int = 256


def seccomp_filter_fd() -> int:
    """A file descriptor (offset 0) holding the compiled filter, for ``bwrap --seccomp FD``.

    The caller passes it to the child and closes it afterwards. Raises ``OSError`` when
    libseccomp cannot be loaded (``apt-get install libseccomp2``).
    """
    try:
        import pyseccomp as sc
    except (ImportError, OSError, AttributeError) as exc:  # the module loads libseccomp.so on import
        raise OSError(f"libseccomp is not available ({exc}): apt-get install libseccomp2") from exc
    filt = sc.SyscallFilter(sc.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            filt.add_rule(sc.ERRNO(errno.EPERM), name)
        except (OSError, ValueError, RuntimeError):  # not a system call on this architecture
            continue
    for flag in _CLONE_NAMESPACE_FLAGS:
        filt.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    try:
        filt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    except (OSError, ValueError, RuntimeError):
        pass
    fd = os.memfd_create("verihub-seccomp", 0)
    with os.fdopen(os.dup(fd), "wb") as fh:
        filt.export_bpf(fh)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
