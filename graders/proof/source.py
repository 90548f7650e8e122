"""Lexing helpers for proof source: comments and strings, by language.

The checks of :mod:`graders.proof.screen` look at tokens, never inside comments or strings, so a
``sorry`` in a comment is harmless and a comment cannot hide a ``Admitted``. Both functions keep
offsets: every removed character becomes a space (newlines stay).
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["Language", "blank_strings", "lean_strings_are_ambiguous", "strip_comments"]

Language = Literal["coq", "lean"]


def _blank(ch: str) -> str:
    return "\n" if ch == "\n" else " "


def strip_comments(code: str, language: Language) -> str:
    """``code`` with comments replaced by spaces (nested comments and strings handled)."""
    open_c, close_c = ("(*", "*)") if language == "coq" else ("/-", "-/")
    out: list[str] = []
    i, n, depth, in_str = 0, len(code), 0, False
    while i < n:
        ch = code[i]
        two = code[i : i + 2]
        if depth == 0 and in_str:
            out.append(ch)
            if language == "lean" and ch == "\\" and i + 1 < n:
                out.append(code[i + 1])
                i += 2
                continue
            if ch == '"':
                if language == "coq" and code[i + 1 : i + 2] == '"':  # "" escapes a quote in Coq
                    out.append('"')
                    i += 2
                    continue
                in_str = False
            i += 1
        elif two == open_c:
            depth += 1
            out.append("  ")
            i += 2
        elif depth > 0 and two == close_c:
            depth -= 1
            out.append("  ")
            i += 2
        elif depth > 0:
            out.append(_blank(ch))
            i += 1
        elif language == "lean" and two == "--":
            while i < n and code[i] != "\n":
                out.append(" ")
                i += 1
        else:
            if ch == '"':
                in_str = True
            out.append(ch)
            i += 1
    return "".join(out)


_LEAN_AMBIGUOUS = re.compile(r"'\\?\"'|r#*\"|«")
"""Lean text where a ``"`` need not open a string: a char literal ``'"'``/``'\\"'``, a raw string
(``r"\\"``, ``r#"a"b"#``: other escapes and ends), a ``«...»`` name (any character inside)."""


def lean_strings_are_ambiguous(code: str) -> bool:
    """True if this screen's string lexing could disagree with Lean's on ``code``.

    Besides :data:`_LEAN_AMBIGUOUS`, a string literal containing ``{`` may be interpolated
    (``s!"{...}"``, ``m!``, ``throwError "..."``: the parser decides, not the lexer), and the code
    between its braces, nested strings included, is Lean code the blanking would hide. Then no
    string is blanked (:func:`blank_strings` returns ``code`` unchanged): failing closed costs at
    most a forbidden word inside a string, never a hidden command.
    """
    if _LEAN_AMBIGUOUS.search(code):
        return True
    blanked = _blank_plain_strings(code, "lean")
    return any("{" in code[m.start() : m.end()] for m in re.finditer(r'"[ \n]*"', blanked))


def blank_strings(code: str, language: Language) -> str:
    """``code`` (already without comments) with the contents of string literals blanked.

    Lean: when the lexing is ambiguous (:func:`lean_strings_are_ambiguous`), nothing is blanked.
    """
    if language == "lean" and lean_strings_are_ambiguous(code):
        return code
    return _blank_plain_strings(code, language)


def _blank_plain_strings(code: str, language: Language) -> str:
    out: list[str] = []
    i, n, in_str = 0, len(code), False
    while i < n:
        ch = code[i]
        if in_str:
            if language == "lean" and ch == "\\" and i + 1 < n:
                out.append("  ")
                i += 2
                continue
            if ch == '"':
                if language == "coq" and code[i + 1 : i + 2] == '"':
                    out.append("  ")
                    i += 2
                    continue
                in_str = False
                out.append('"')
            else:
                out.append(_blank(ch))
            i += 1
            continue
        if ch == '"':
            in_str = True
        out.append(ch)
        i += 1
    return "".join(out)
