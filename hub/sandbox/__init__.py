"""Running untrusted environment code in a bubblewrap sandbox (threat model: docs/sandbox.md).

Public interface (everything else in this package is internal)::

    from hub.sandbox import run, start_environment, Limits, unavailable_reason

    # one command, output captured (e.g. building a wheel from an untrusted source). Builds
    # write into their source tree: copy it into the writable folder first.
    shutil.copytree(src, area / "src")       # area: a folder of yours, a size-capped tmpfs inside
    proc = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                "--no-index", "-w", str(area / "out"), str(area / "src")],
               rw_dir=area, network=False, timeout_s=300, memory_mb=2048,
               env={"PATH": "/usr/bin:/bin", "HOME": str(area), "TMPDIR": str(area),
                    "LANG": "C.UTF-8"})
    proc.returncode, proc.stdout, proc.stderr       # a subprocess.CompletedProcess[str]

    # an environment served from a staged package (folder with the import package and its
    # .dist-info), driven over the nonce-checked channel:
    env = start_environment(stage, "arith", {}, limits=Limits(wall_s=600))
    tasks = list(itertools.islice(env.tasks("test"), 5)); grade = await env.grade(task, rollout)
    env.close()

- :func:`run` / :class:`SandboxProcess`: see :mod:`hub.sandbox.process`; the sandbox itself
  (namespaces, binds, tmpfs sizes, seccomp) is described in :mod:`hub.sandbox.bwrap` and
  :mod:`hub.sandbox.policy`.
  ``ro_binds`` adds host paths readable at the same path; the interpreter, its site-packages
  and the system libraries always are (verihub's own code only for environments).
- :func:`start_environment` / :class:`RemoteEnvironment`: :mod:`hub.sandbox.remote`; the
  protocol: :mod:`hub.sandbox.channel`; the program inside: :mod:`hub.sandbox.envserver`.
- :func:`hub.sandbox.redact.clean`: what a report may quote of the package's free text (capped,
  stripped of this process's secrets).
- :func:`unavailable_reason`: None when a sandbox can be made here, else one line saying what to
  install (``apt-get install bubblewrap``). Callers refuse to run untrusted code then, unless
  the user passed ``--unsafe-no-sandbox`` (``unsafe=True``), and say so on a report's first line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hub._lazy import surface

if TYPE_CHECKING:
    from hub.sandbox.bwrap import unavailable_reason
    from hub.sandbox.channel import RemoteError, TamperingError
    from hub.sandbox.policy import Limits
    from hub.sandbox.process import SandboxProcess, SandboxUnavailableError, run
    from hub.sandbox.redact import MAX_DETAIL, MAX_REASON, clean, host_secrets
    from hub.sandbox.remote import RemoteEnvironment, SandboxDiedError, start_environment, start_installed
    from hub.sandbox.stage import (
        STAGE_PREFIX,
        StageError,
        links_outside,
        make_writable,
        read_only_copy,
        stage_installed,
    )

__all__ = [
    "Limits",
    "MAX_DETAIL",
    "MAX_REASON",
    "RemoteEnvironment",
    "RemoteError",
    "STAGE_PREFIX",
    "SandboxDiedError",
    "SandboxProcess",
    "SandboxUnavailableError",
    "StageError",
    "TamperingError",
    "UNSAFE_BANNER",
    "clean",
    "host_secrets",
    "links_outside",
    "make_writable",
    "read_only_copy",
    "run",
    "stage_installed",
    "start_environment",
    "start_installed",
    "unavailable_reason",
]

__getattr__, __dir__ = surface(
    __name__,
    {
        "Limits": "hub.sandbox.policy",
        "MAX_DETAIL": "hub.sandbox.redact",
        "MAX_REASON": "hub.sandbox.redact",
        "RemoteEnvironment": "hub.sandbox.remote",
        "RemoteError": "hub.sandbox.channel",
        "STAGE_PREFIX": "hub.sandbox.stage",
        "SandboxDiedError": "hub.sandbox.remote",
        "SandboxProcess": "hub.sandbox.process",
        "SandboxUnavailableError": "hub.sandbox.process",
        "StageError": "hub.sandbox.stage",
        "TamperingError": "hub.sandbox.channel",
        "clean": "hub.sandbox.redact",
        "host_secrets": "hub.sandbox.redact",
        "links_outside": "hub.sandbox.stage",
        "make_writable": "hub.sandbox.stage",
        "read_only_copy": "hub.sandbox.stage",
        "run": "hub.sandbox.process",
        "stage_installed": "hub.sandbox.stage",
        "start_environment": "hub.sandbox.remote",
        "start_installed": "hub.sandbox.remote",
        "unavailable_reason": "hub.sandbox.bwrap",
    },
)

UNSAFE_BANNER = (
    "UNSAFE: --unsafe-no-sandbox was given: the package's code ran WITHOUT the sandbox "
    "(no namespaces, no seccomp, host files and network reachable)"
)
