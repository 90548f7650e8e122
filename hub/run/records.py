"""The records of ``rollouts.jsonl``: one JSON line per rollout, read and appended safely.

- :func:`rollout_line` encodes a rollout as one line of pydantic-core's JSON (by orjson where
  that gives the same bytes; the answer stored once, lone surrogates replaced), and
  :func:`read_records` reads lines back, skipping a last line still being written;
- :class:`RolloutWriter` appends whole records: a short write is completed, a failed one is cut
  back to the last whole record and raises :class:`RunDirError`.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from graders import Check, Grade
from hub.env import (
    Message,
    Rollout,
    RolloutError,
    RunDirError,
    Timing,
    ToolCall,
    Usage,
    final_answer,
    scrub_surrogates,
)

__all__ = ["RolloutWriter", "os_reason", "read_records", "rollout_line"]


def read_records(path: Path) -> Iterator[Rollout]:
    """The rollouts in a JSON-lines file, in order; a last line without its newline (being
    written, or torn by a crash) is skipped; a malformed line is a :class:`RunDirError`."""
    if not path.exists():
        return
    with path.open("rb") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.endswith(b"\n"):
                return
            if not line.strip():
                continue
            try:
                yield Rollout.model_validate_json(line)
            except ValidationError as exc:
                raise RunDirError(
                    f"{path}:{lineno} is not a valid rollout record "
                    f"({exc.errors()[0]['loc']}: {exc.errors()[0]['msg']})"
                ) from exc


class RolloutWriter:
    """Appends rollouts as JSON lines, one ``write`` per rollout, unbuffered.

    A short write is completed; a write that fails (``ENOSPC``, ``EIO``, a quota) cuts the file
    back to its last whole record and raises :class:`RunDirError`, so the file stays valid and a
    resume continues from there once the cause is fixed.
    """

    def __init__(self, path: Path, *, on_close: Callable[[], object] | None = None) -> None:
        self.path = path
        self._fh: IO[bytes] = path.open("ab", buffering=0)
        self._fd = self._fh.fileno()
        self._size = os.fstat(self._fd).st_size
        self._on_close = on_close

    def write(self, rollout: Rollout) -> None:
        self._append(rollout_line(rollout))

    def write_many(self, rollouts: list[Rollout]) -> None:
        """Write several rollouts with one ``write`` (a group lands together or not at all)."""
        self._append(b"".join(rollout_line(r) for r in rollouts))

    def _append(self, data: bytes) -> None:
        fd = self._fd
        done = 0
        try:
            n = done = os.write(fd, data)  # almost always the whole record at once
            while n > 0 and done < len(data):  # a short write: the rest, from where it stopped
                n = os.write(fd, memoryview(data)[done:])
                done += n
            if done < len(data):  # no progress and no error: treat as a full device
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        except OSError as exc:
            cut = ""
            try:
                os.ftruncate(fd, self._size)
            except OSError:
                cut = "; the torn record is removed by the resume"
            raise RunDirError(
                f"cannot append to {self.path} ({os_reason(exc)}); the file keeps its whole records"
                f"{cut}. Free space, then `verihub eval --resume {self.path.parent}` continues the run"
            ) from exc
        self._size += done

    def close(self) -> None:
        try:
            self._fh.close()
        finally:
            if self._on_close is not None:
                self._on_close()
                self._on_close = None

    def __enter__(self) -> RolloutWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def rollout_line(rollout: Rollout) -> bytes:
    """One JSON line. Text with lone surrogates (from a model, tool or grader: ``"\\ud800"`` is
    valid JSON but not encodable UTF-8) is saved with U+FFFD in their place rather than lost.

    The answer is stored once: ``completion`` is left out when it is the last assistant
    message's text (reading the line fills it in again, see :class:`hub.types.Rollout`)."""
    try:
        return _dump(rollout)
    except (PydanticSerializationError, UnicodeEncodeError):
        return _dump(Rollout.model_validate(_scrub(rollout.model_dump(mode="python"))))


_TO_JSON = Rollout.__pydantic_serializer__.to_json  # what model_dump_json calls, as bytes
_WITHOUT_COMPLETION = {"completion"}  # a set, never changed: pydantic-core takes a frozenset slower


def _dump(rollout: Rollout) -> bytes:
    derived = rollout.completion == final_answer(rollout.messages)
    try:
        return _fast_line(rollout, derived)
    except (orjson.JSONEncodeError, TypeError):
        pass  # something only pydantic-core encodes (or a lone surrogate): the reference encoder
    return _TO_JSON(rollout, exclude=_WITHOUT_COMPLETION if derived else None) + b"\n"


_PLAIN_RECORDS = frozenset({Message, ToolCall, Usage, Timing, RolloutError, Grade, Check})
"""Records whose JSON is exactly their fields in order (no aliases, serializers, computed or
extra fields), so that their ``__dict__`` encodes to the bytes pydantic-core writes."""
_FAST_OPTIONS = (
    orjson.OPT_APPEND_NEWLINE
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
"""Everything orjson would write in its own way (dataclasses, dates, subclasses of str, int,
dict and list) goes to :func:`_fields` instead, which refuses it: pydantic-core writes it."""


def _fields(value: Any) -> dict[str, Any]:
    if type(value) in _PLAIN_RECORDS:
        return value.__dict__  # type: ignore[no-any-return]
    raise TypeError(type(value).__name__)


def _fast_line(rollout: Rollout, derived: bool) -> bytes:
    """The line pydantic-core would write, by orjson (about half the cost): the same bytes for
    every rollout it accepts (tests/hub/test_rollout_line.py holds them equal)."""
    if type(rollout) is not Rollout or rollout.__pydantic_extra__:
        raise TypeError("not a plain Rollout")
    fields = rollout.__dict__
    if derived:
        fields = fields.copy()
        del fields["completion"]
    return orjson.dumps(fields, default=_fields, option=_FAST_OPTIONS)


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return scrub_surrogates(value)
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_scrub(v) for v in value)
    return value


def os_reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__
