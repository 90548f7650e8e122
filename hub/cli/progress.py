"""A rich progress bar for runs: done/total, rate, errors and the running mean reward."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from hub.metrics import SummaryBuilder
from hub.types import Rollout

__all__ = ["RunProgress"]


class RunProgress:
    """Context manager whose ``update`` is the runner's ``on_rollout`` callback."""

    def __init__(self, total: int, *, done: int = 0, console: Console | None = None) -> None:
        self._progress = Progress(
            TextColumn("[bold]eval"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:>7.1f}/s"),
            TextColumn("errors {task.fields[errors]}"),
            TextColumn("mean {task.fields[mean]}"),
            TimeElapsedColumn(),
            console=console or Console(stderr=True),
            transient=False,
            refresh_per_second=4,
        )
        self._task = self._progress.add_task("eval", total=total, completed=done, rate=0.0, errors=0, mean="-")
        self._n = 0

    def update(self, rollout: Rollout, builder: SummaryBuilder) -> None:
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
        self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()
