"""The review worker: takes jobs from the database queue and runs each review in a child process.

``verihub hub worker --db URL --data DIR`` runs one on any machine that reaches the database
and the artifact store; ``verihub hub serve`` on SQLite starts one itself. The worker process is
single-threaded: while the review child runs it renews the job's lease every third of
``lease_s``. When the worker dies the lease runs out and another worker (or this one after a
restart) runs the job again. With ``parent_pid`` set it exits once that process is gone.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hub.server.cache import bump
from hub.server.config import HubConfig
from hub.server.db import make_engine, sessions
from hub.server.jobs import claim, finish, heartbeat
from hub.server.storage import LocalStorage

__all__ = ["work"]

_REVIEW_TIMEOUT_S = 3600.0


def _parent_gone(parent_pid: int | None) -> bool:
    return parent_pid is not None and os.getppid() != parent_pid


def work(config: HubConfig, *, once: bool = False, poll_s: float = 1.0, parent_pid: int | None = None) -> int:
    """Run jobs until stopped (or, with ``once``, until the queue is empty); returns jobs done."""
    engine = make_engine(config.database)
    make = sessions(engine)
    storage = LocalStorage(config.data)
    name = f"{socket.gethostname()}:{os.getpid()}"
    done = 0
    while not _parent_gone(parent_pid):
        job = claim(make, name, config.lease_s)
        if job is None:
            if once:
                break
            time.sleep(poll_s)
            continue
        if not storage.exists(job.bundle_sha256):
            problem = f"the bundle blob {job.bundle_sha256} is missing from the artifact store"
            finish(make, job, name, passed=False, report={"passed": False, "problems": [problem]})
            bump(config.data)
            continue
        with tempfile.TemporaryDirectory(prefix="verihub-job-") as tmp:
            out = Path(tmp) / "report.json"
            cmd = [sys.executable, "-m", "hub.server.review", str(storage.path(job.bundle_sha256)), str(out)]
            if config.review_fast:
                cmd.append("--fast")
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            started = time.monotonic()
            lost = False
            while proc.poll() is None:
                try:
                    proc.wait(timeout=max(config.lease_s / 3, 0.2))
                except subprocess.TimeoutExpired:
                    lost = not heartbeat(make, job, name, config.lease_s)
                    if lost or _parent_gone(parent_pid) or time.monotonic() - started > _REVIEW_TIMEOUT_S:
                        proc.kill()
                        proc.wait()
                        break
            stderr = proc.stderr.read() if proc.stderr else ""
            if lost or _parent_gone(parent_pid):
                continue
            if out.is_file():
                report = json.loads(out.read_text(encoding="utf-8"))
            else:
                tail = [ln for ln in stderr.splitlines() if ln.strip()][-3:]
                report = {"passed": False, "problems": [f"the review process failed: {' | '.join(tail)}"]}
            report["duration_s"] = round(time.monotonic() - started, 2)
            report["attempt"] = job.attempt
            finish(make, job, name, passed=bool(report.get("passed")), report=report)
            bump(config.data)
            done += 1
    engine.dispose()
    return done
