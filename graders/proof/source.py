"""Lexing helpers for proof source: comments and strings, by language.

The checks of :mod:`graders.proof.screen` look at tokens, never inside comments or strings, so a
``sorry`` in a comment is harmless and a comment cannot hide a ``Admitted``. Both functions keep
offsets: every removed character becomes a space (newlines stay).
"""

from __future__ import annotations

from typing import Literal

__all__ = ["Language", "blank_strings", "strip_comments"]

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


def blank_strings(code: str, language: Language) -> str:
    """``code`` (already without comments) with the contents of string literals blanked."""
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
