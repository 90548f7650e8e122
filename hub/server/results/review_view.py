"""What the rollout page shows of labels and corrections, and the correction form's turns.

:func:`review_context` gives the rollout template its ``review`` (the shown label, the history,
the corrections, whether the viewer may add to them) and, for a viewer who may, the correction
form's ``turns``: every message of the rollout, the assistant turns editable as ``turn_<i>``
(``i`` the message's 0-based position), the others read-only. :func:`edited_messages` turns a
posted form back into the whole transcript the correction service checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session

from hub.env import Rollout
from hub.server.accounts import Principal
from hub.server.core import Run, RunRollout
from hub.server.results.labels import LABELS, MAX_NOTE
from hub.server.results.rollout_review import review_state
from hub.server.results.rollout_store import transcript_json

__all__ = ["MAX_FORM_TEXT", "FormTurn", "edited_messages", "review_context"]

#: The correction form is offered when the assistant turns' text is at most this long (characters);
#: longer rollouts are corrected through the API (a form body is at most 256 KiB).
MAX_FORM_TEXT = 150_000
#: How much of a read-only turn the correction form shows (the transcript below has it all).
_READ_ONLY_CHARS = 2_000


@dataclass(frozen=True)
class FormTurn:
    """One message in the correction form: ``field`` is ``turn_<i>`` for an assistant turn, else ''."""

    index: int
    role: str
    field: str
    text: str
    calls: list[str]


def _text(content: Any) -> str:
    return content if isinstance(content, str) else ""


def _turns(rollout: Rollout, posted: Mapping[str, str] | None) -> list[FormTurn] | None:
    turns: list[FormTurn] = []
    size = 0
    for i, m in enumerate(rollout.messages):
        calls = [f"{c.name}({c.arguments})"[:_READ_ONLY_CHARS] for c in m.tool_calls or []]
        if m.role == "assistant":
            field = f"turn_{i}"
            text = posted[field] if posted is not None and field in posted else _text(m.content)
            size += len(text)
            turns.append(FormTurn(i, m.role, field, text, calls))
        else:
            turns.append(FormTurn(i, m.role, "", _text(m.content)[:_READ_ONLY_CHARS], calls))
    return turns if size <= MAX_FORM_TEXT else None


def review_context(
    session: Session,
    who: Principal | None,
    run: Run,
    row: RunRollout,
    posted: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The rollout template's review parts (``posted``: a refused correction form, shown again)."""
    state = review_state(session, who, run, row.idx)
    turns: list[FormTurn] | None = None
    too_long = False
    if state.can_label:
        try:
            turns = _turns(Rollout.model_validate_json(transcript_json(row)), posted)
        except ValidationError:
            turns = None
        too_long = turns is None
    return {
        "review": state,
        "label_values": LABELS,
        "max_note": MAX_NOTE,
        "turns": turns,
        "correction_too_long": too_long,
        "posted": posted or {},
    }


def edited_messages(rollout: Rollout, form: Mapping[str, str]) -> list[dict[str, Any]]:
    """The whole transcript of ``rollout`` with the text of each turn ``i`` sent as ``turn_<i>``
    (line ends as the browser sends them, ``\\r\\n``, read as ``\\n``; a turn left as it was keeps
    its exact text), the others as recorded. The form has fields for assistant turns only; a
    changed turn of another role is the correction service's to refuse."""
    out: list[dict[str, Any]] = []
    for i, m in enumerate(rollout.messages):
        field = f"turn_{i}"
        if field in form:
            sent = form[field].replace("\r\n", "\n")
            before = _text(m.content)
            if sent != before.replace("\r\n", "\n"):
                m = m.model_copy(update={"content": sent})
        out.append(m.model_dump(mode="json", exclude_none=True))
    return out
