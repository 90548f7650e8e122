"""A rich progress bar for runs: done/total, rate, errors and the running mean reward."""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from hub.env import Rollout
from hub.run import SummaryBuilder

__all__ = ["PUSH_S", "RunProgress"]

PUSH_S = 0.1
"""Seconds between two updates of the bar (rich draws it 4 times a second)."""


class RunProgress:
    """The runner's ``on_start`` / ``on_rollout`` callbacks, drawn as a bar on stderr.

    The bar appears only once the run has started (environment loaded, model reachable), so an
    early error prints alone. Use as a context manager so the bar is always closed.
    """

    def __init__(self, *, enabled: bool = True, console: Console | None = None) -> None:
        self.enabled = enabled
        self._progress = Progress(
            TextColumn("[bold]eval"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:>7.1f}/s"),
            TextColumn("errors {task.fields[errors]}"),
            TextColumn("mean {task.fields[mean]}"),
            TimeElapsedColumn(),
            console=console or Console(stderr=True),
            refresh_per_second=4,
        )
        self._task: TaskID | None = None
        self._n = 0
        self._pending = 0
        self._started = self._pushed = 0.0
        self._builder: SummaryBuilder | None = None

    def start(self, total: int, done: int) -> None:
        if not self.enabled:
            return
        self._task = self._progress.add_task(
            "eval", total=total, completed=done, rate=0.0, errors=0, mean="-"
        )
        self._progress.start()
        self._started = self._pushed = time.monotonic()

    def update(self, rollout: Rollout, builder: SummaryBuilder) -> None:
        """Count a finished rollout; the bar itself is updated at most every ``PUSH_S`` (it is
        drawn only 4 times a second), so a rollout costs a counter, not a bar update."""
        if self._task is None:
            return
        self._n += 1
        self._pending += 1
        self._builder = builder
        now = time.monotonic()
        if now - self._pushed >= PUSH_S:
            self._push(builder, now)

    def _push(self, builder: SummaryBuilder, now: float) -> None:
        if self._task is None:
            return
        mean = builder.running_mean
        elapsed = now - self._started
        self._progress.update(
            self._task,
            advance=self._pending,
            rate=self._n / elapsed if elapsed > 0 else 0.0,
            errors=builder.n_errors,
            mean="-" if mean is None else f"{mean:.3f}",
        )
        self._pending = 0
        self._pushed = now

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._task is not None:
            if self._pending and self._builder is not None:
                self._push(self._builder, time.monotonic())
            self._progress.stop()
