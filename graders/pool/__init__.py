"""A persistent pool of worker processes with a hard, parent-side timeout and a memory cap.

Reading guide
-------------
Graders that parse or compare hostile model text (sympy, LaTeX grammars, regexes over huge
inputs) must never hang the caller or blow up its memory. :class:`WorkerPool` runs such work in
long-lived child processes:

- **hard timeout, enforced by the parent**: the parent waits on the worker's pipe for at most
  ``timeout`` seconds; past that the worker is killed (``SIGKILL``) and replaced, and the call
  raises :class:`PoolTimeout`. Nothing relies on alarm signals or on the work cooperating.
- **warm replacements**: workers are forked from a template process that has already run
  ``initializer`` (imports, warm-up), so a killed worker's replacement is ready in milliseconds
  and a run of hostile inputs costs each call its timeout, not a cold start as well.
- **memory cap**: ``RLIMIT_AS`` (inherited by every worker), so a runaway allocation fails
  with ``MemoryError`` in the worker (:class:`WorkerError`) or kills only it (:class:`WorkerDied`).
- **persistent**: workers live across calls, so per-process caches are reused.
- **sync and async**: :meth:`WorkerPool.submit` blocks; :meth:`WorkerPool.asubmit` awaits
  without blocking the event loop (the wait happens on a pool-owned thread).

The template is a ``python -m graders.pool`` subprocess (nothing re-imports the caller's
``__main__``, unlike ``multiprocessing``'s spawn); it receives two pipes per worker over a Unix
socket and forks a worker onto them, which speaks length-prefixed pickle frames (stray prints go
to stderr). POSIX only; ``initializer`` must not start threads. Functions and arguments must be
picklable by reference (importable by module path, not defined in ``__main__``)::

    with WorkerPool(size=2, memory_mb=1024) as pool:
        value = pool.submit(slow_function, "input", timeout=2.0)

Exceptions (all subclasses of :class:`PoolError`)::

    PoolError
    ├── PoolTimeout   the call ran past its timeout; its worker was killed and replaced
    ├── WorkerDied    the worker exited mid-call (crash, OOM kill); it was replaced
    ├── WorkerError   the function raised inside the worker (type name and message kept)
    └── PoolClosed    the pool was closed
"""

from graders.pool.errors import PoolClosed, PoolConfig, PoolError, PoolTimeout, WorkerDied, WorkerError
from graders.pool.process import serve, timed_call
from graders.pool.workers import WorkerPool, shared_pool

__all__ = [
    "PoolClosed",
    "PoolConfig",
    "PoolError",
    "PoolTimeout",
    "WorkerDied",
    "WorkerError",
    "WorkerPool",
    "serve",
    "shared_pool",
    "timed_call",
]
