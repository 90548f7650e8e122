"""Untrusted text as pages show it: escaped, with invisible and direction-changing characters made
visible.

A transcript, task id or grader reason may carry bidirectional controls (U+202E and friends, which
reorder what a reader sees: "Trojan Source"), zero-width characters and C0/C1 controls. Escaping
alone leaves them working, so :func:`visible` replaces each with a marked ``U+XXXX`` token after
escaping, and :func:`cut` bounds how much of a long text a page carries.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

__all__ = ["BIDI_CONTROLS", "cut", "visible"]

#: Characters that change the display order of the text around them.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

_HIDDEN = re.compile(
    "[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f"  # C0 and C1 controls but tab, LF, CR
    "\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]"
)


def _token(match: re.Match[str]) -> str:
    return f'<span class="ctl">U+{ord(match.group()):04X}</span>'


def visible(value: object) -> Markup:
    """``value`` as text, HTML-escaped, each hidden or bidi control shown as a ``U+XXXX`` token."""
    if value is None:
        return Markup("")
    return Markup(_HIDDEN.sub(_token, str(escape(str(value)))))


def cut(text: str, limit: int) -> tuple[str, int]:
    """The first ``limit`` characters of ``text`` and how many were left out."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit
