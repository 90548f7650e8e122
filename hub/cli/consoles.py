"""The command line's Rich consoles: no wrapping of messages, and no 80-column tables in pipes.

A message is printed as one line (a terminal wraps it for the eye; a pipe or a log keeps it whole,
so a run id or a command to copy is never split). When the output is not a terminal, tables get a
wide page instead of Rich's 80-column default.
"""

from __future__ import annotations

from rich.console import Console

__all__ = ["PIPE_WIDTH", "CliConsole", "make_console"]

#: The page width for tables when the output is a pipe or a file.
PIPE_WIDTH = 240


class CliConsole(Console):
    """A console whose width is :data:`PIPE_WIDTH` when it does not write to a terminal."""

    @property
    def width(self) -> int:
        width = int(super().width)
        return width if self.is_terminal else max(width, PIPE_WIDTH)

    @width.setter
    def width(self, value: int) -> None:
        self._width = value


def make_console(*, stderr: bool = False, markup: bool = True) -> Console:
    """A console for a command's output (``stderr`` for diagnostics and progress)."""
    return CliConsole(stderr=stderr, highlight=False, markup=markup, soft_wrap=True)
