"""Boxes in a model's response: where they are, what is inside, and whether a reader sees them
as the answer.

- :func:`boxed_spans` / :func:`find_boxed`: every closed ``\\boxed{...}`` / ``\\fbox{...}`` (braces
  balanced, ``\\{``/``\\}`` escapes respected, a box directly inside another unwrapped), and the
  brace-less ``\\boxed 5`` / ``\\boxed5``; linear scans bounded by ``max_answer_chars``;
- :func:`box_flag`: why the boxes cannot be read as the answer (hidden in ``\\phantom`` or an HTML
  comment, negated, an operand of the math around it, questioned), or None;
- :func:`box_in_context`: the test behind those flags, reusable (``graders.exact`` uses it for
  alternatives around a box);
- :func:`code_spans`: fenced code blocks, whose boxes are quoted code.

Used by :mod:`graders.extract`; nothing here evaluates anything.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["BOX_OPENERS", "box_flag", "box_in_context", "boxed_spans", "code_spans", "find_boxed"]

BOX_OPENERS = ("\\boxed", "\\fbox")

# a box the reader never sees: inside \\phantom/\\hphantom/\\vphantom, or an HTML comment
_HIDING = re.compile(r"\\[hv]?phantom(?![A-Za-z])[ \t]*|<!--")
# a box right after a negation ("the answer is not \\boxed{5}", "x \\neq \\boxed{5}")
_NEGATED_BOX = re.compile(
    r"(?<![A-Za-z])(?:(?i:not|isn't|isn\u2019t|never)|\\neq?(?![A-Za-z])|\u2260)"
    r"(?:[\s*_${]|\\[(\[]){0,20}\\(?:boxed|fbox)(?![A-Za-z])"
)
# the brace-less ``\\boxed 5`` and ``\\boxed5`` (a digit or sign right after the command name)
_SPACE_BOX = re.compile(r"\\(?:boxed|fbox)(?:[ \t]+|(?=[\d+-]))([^\s${}\\]{1,100})")


def _scan_braces(text: str, start: int, limit: int) -> int:
    """Index of the ``}`` closing the ``{`` at ``start``, or -1 (unclosed or longer than limit)."""
    depth = 0
    end = min(len(text), start + limit + 2)
    i = start
    while i < end:
        ch = text[i]
        if ch == "\\":
            i += 2  # an escaped character (``\{``, ``\}``, ``\\``) never changes the depth
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _unwrap_box(content: str, max_chars: int) -> str:
    """``\\boxed{\\boxed{5}}`` -> ``5``: a box that is exactly another box is unwrapped."""
    while True:
        stripped = content.strip()
        for opener in BOX_OPENERS:
            if stripped.startswith(opener + "{"):
                close = _scan_braces(stripped, len(opener), max_chars)
                if close == len(stripped) - 1:
                    content = stripped[len(opener) + 1 : close]
                    break
        else:
            return stripped


def find_boxed(text: str, *, max_answer_chars: int = 2000) -> list[str]:
    """Contents of every closed ``\\boxed{}``/``\\fbox{}`` in ``text``, in order.

    Boxes nested inside a captured box are not reported separately; unclosed boxes are skipped.
    Callers facing hostile input should bound the number of openings first (see
    :class:`ExtractConfig.max_boxed`).
    """
    return [content for _, _, content in boxed_spans(text, max_answer_chars)]


def boxed_spans(text: str, max_answer_chars: int = 2000) -> list[tuple[int, int, str]]:
    """``(start, end, contents)`` of every box of :func:`find_boxed`, in order."""
    openings = sorted((pos, opener) for opener in BOX_OPENERS for pos in _positions(text, opener))
    found: list[tuple[int, int, str]] = []
    covered_until = -1
    for pos, opener in openings:
        if pos <= covered_until:
            continue  # inside a box already captured
        j = pos + len(opener)
        while j < len(text) and text[j] in " \t":
            j += 1
        if j < len(text) and text[j] == "{":
            close = _scan_braces(text, j, max_answer_chars)
            if close != -1:
                found.append((pos, close + 1, _unwrap_box(text[j + 1 : close], max_answer_chars)))
                covered_until = close
    for match in _SPACE_BOX.finditer(text):
        found.append((match.start(), match.end(), match.group(1)))
    found.sort(key=lambda item: item[0])
    return found


def _positions(text: str, needle: str) -> list[int]:
    out: list[int] = []
    pos = text.find(needle)
    while pos != -1:
        out.append(pos)
        pos = text.find(needle, pos + len(needle))
    return out


# a box that is an operand of the math around it: "x = -\\boxed{5}", "\\frac{1}{\\boxed{5}}",
# "\\boxed{5}\\times 10^3", "\\boxed{5}^2" (a bullet "- \\boxed{5}", "**\\boxed{5}**", "\\boxed{5}^\\circ",
# "\\boxed{52}_8", "\\boxed{10}\\%" and AIME's "= 8\\boxed{321}", the last three digits, are not)
_OPERAND_BEFORE = re.compile(
    r"(?:(?<=[^\s-])[ \t]*[-+\u2212]|\^|/|\\(?:cdot|times|div)|\\[dt]?frac[ \t]*\{"
    r"|\\sqrt[ \t]*(?:\[[^\]\n]*\])?[ \t]*\{|[\^_][ \t]*\{|\}[ \t]*\{)[ \t]*$"
)
# a box followed by a question mark asks, it does not answer: "Is it \\boxed{5}?"
_QUESTIONED = re.compile(r"(?:[ \t*$]|\\\)|\\\]){0,6}\?")
_OPERAND_AFTER = re.compile(r"[ \t]*(?:\\(?:cdot|times|div)(?![A-Za-z])|/|\^(?![ \t]*\{?[ \t]*\\circ))")


def box_in_context(
    response: str,
    spans: Sequence[tuple[int, int, str]],
    *,
    before: re.Pattern[str] | None = None,
    after: re.Pattern[str] | None = None,
) -> bool:
    """Whether some box of ``spans`` (from :func:`boxed_spans`) has ``before`` ending right
    before it (searched in the 40 characters of its line ahead of it) or ``after`` matching
    right after it."""
    for start, end, _ in spans:
        if before is not None:
            line_start = response.rfind("\n", 0, start) + 1
            if before.search(response, max(line_start, start - 40), start) is not None:
                return True
        if after is not None and after.match(response, end) is not None:
            return True
    return False


def box_flag(response: str, limit: int) -> str | None:
    """Why the response's boxes cannot be read as its answer, if they cannot: a box hidden from
    the reader, negated, used as an operand (``x = -\\boxed{5}`` states -5) or questioned
    (``\\boxed{5}?``)."""
    if _hidden_box(response, limit):
        return "hidden_box"
    if _NEGATED_BOX.search(response):
        return "negated_box"
    spans = boxed_spans(response, limit)
    if box_in_context(response, spans, before=_OPERAND_BEFORE, after=_OPERAND_AFTER):
        return "embedded_box"
    if box_in_context(response, spans, after=_QUESTIONED):
        return "questioned_box"
    return None


_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)[^\n]*$", re.MULTILINE)


def code_spans(response: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every fenced code block (````` ``` ````` or ``~~~`` lines; one never
    closed runs to the end, as Markdown renders it)."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    marker = ""
    for m in _FENCE.finditer(response):
        if start is None:
            start, marker = m.start(), m.group(1)
        elif m.group(0).strip().strip(marker[0]) == "" and m.group(1) == marker:
            spans.append((start, m.end()))
            start = None
    if start is not None:
        spans.append((start, len(response)))
    return spans


def _hidden_box(response: str, limit: int) -> bool:
    """Whether a box opening lies inside a ``\\phantom`` (or ``\\hphantom``/``\\vphantom``)
    argument or an HTML comment: rendered, the reader sees no such answer. Linear: each
    character is scanned at most once."""
    covered = 0
    for m in _HIDING.finditer(response):
        if m.start() < covered:
            continue
        if m.group(0) == "<!--":
            end = response.find("-->", m.end())
            end = len(response) if end == -1 else end
        elif response.startswith("{", m.end()):
            close = _scan_braces(response, m.end(), limit)
            end = close if close != -1 else min(len(response), m.end() + limit)
        else:  # a one-token argument: \\phantom\\boxed{5}
            end = m.end() + max(len(opener) for opener in BOX_OPENERS)
        if any(response.find(opener, m.end(), end) != -1 for opener in BOX_OPENERS):
            return True
        covered = end
    return False
