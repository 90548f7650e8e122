"""A rich progress bar for runs: done/total, rate, errors and the running mean reward."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from hub.env import Rollout
from hub.run import SummaryBuilder

__all__ = ["RunProgress"]


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

    def start(self, total: int, done: int) -> None:
        if not self.enabled:
            return
        self._task = self._progress.add_task(
            "eval", total=total, completed=done, rate=0.0, errors=0, mean="-"
        )
        self._progress.start()

    def update(self, rollout: Rollout, builder: SummaryBuilder) -> None:
        if self._task is None:
            return
        self._n += 1
        mean = builder.running_mean
        elapsed = self._progress.tasks[0].elapsed or 0.0
        self._progress.update(
            self._task,
            advance=1,
            rate=self._n / elapsed if elapsed > 0 else 0.0,
            errors=builder.n_errors,
            mean="-" if mean is None else f"{mean:.3f}",
        )

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._task is not None:
            self._progress.stop()
