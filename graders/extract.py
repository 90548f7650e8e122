"""Generic final-answer extraction from free-form model responses.

Reading guide
-------------
:func:`extract_answers` finds every answer a response commits to, using the first form present
(in this order, configurable through :class:`ExtractConfig`):

1. ``boxed``: the contents of every closed ``\\boxed{...}`` / ``\\fbox{...}`` (braces balanced,
   ``\\{``/``\\}`` escapes respected, a box directly inside another box unwrapped), and the
   brace-less ``\\boxed 5`` / ``\\boxed5``;
2. ``hash``: ``#### N`` lines (GSM8K's reference format);
3. ``answer_is``: "the answer is X", "final answer: X";
4. ``a_colon``: lines ``A: X`` / ``Answer: X`` / ``FINAL ANSWER: X`` (the words in any case);
5. ``final_line``: the last non-empty line, when it is short and not prose (no words of three
   or more letters outside LaTeX commands), with the lines of that kind right above it (each
   an answer: ``5\\nor\\n6`` ends in three candidates, not in the answer 6);
6. ``last_math`` (opt-in, not in :data:`DEFAULT_FORMS`): in the last three non-empty lines,
   the right-hand side of the last ``=`` of the last ``$...$``/``\\(...\\)`` segment
   (``$180 + 24 = 204$`` gives ``204``); a segment without ``=`` is not a result (a copied
   question's ``$\\binom{31}{28}$`` is not an answer).

Boxes the reader does not see as an answer are not read as one: a box inside ``\\phantom{}`` or
an HTML comment, right after "not" (``the answer is not \\boxed{5}``), before a question mark
(``Is it \\boxed{5}?``) or inside a larger expression (``x = -\\boxed{5}``,
``\\frac{1}{\\boxed{5}}``) flags the response; a
box in a fenced code block is quoted code, read only when the rest of the response holds no
answer and otherwise only cross-checked against it (``others``).

It returns *all* answers of the chosen form; what to do when they differ is the caller's
:data:`MultiAnswerPolicy` (``reject`` by default: committing to several different answers fails).
:func:`apply_policy` implements the policies given an equivalence test.

Hostile inputs are cheap: a response with more than ``max_boxed`` box openings is flagged
without being scanned, brace scans stop after ``max_answer_chars``, and every regex is linear.
Nothing here evaluates anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "ALL_FORMS",
    "DEFAULT_FORMS",
    "AnswerForm",
    "ExtractConfig",
    "Extraction",
    "MultiAnswerPolicy",
    "apply_policy",
    "box_in_context",
    "boxed_spans",
    "extract_answers",
    "find_boxed",
]

AnswerForm = Literal["boxed", "hash", "answer_is", "a_colon", "final_line", "last_math"]
MultiAnswerPolicy = Literal["reject", "first", "last"]
"""What to do when a response commits to several answers: ``reject`` fails it unless they are
all equivalent; ``first``/``last`` grade only the first/last one."""

ALL_FORMS: tuple[AnswerForm, ...] = ("boxed", "hash", "answer_is", "a_colon", "final_line", "last_math")
DEFAULT_FORMS: tuple[AnswerForm, ...] = ("boxed", "hash", "answer_is", "a_colon", "final_line")
"""The forms tried by default. ``last_math`` is opt-in: a copied question's ``$\\omega^3 = 1$``
would otherwise count as an answer."""

_BOX_OPENERS = ("\\boxed", "\\fbox")
_HASH = re.compile(r"^[ \t]*####[ \t]*(\S[^\n]{0,300})$", re.MULTILINE)
_ANSWER_IS = re.compile(r"(?:final answer|the answer|answer is)(?:[ \t]+is)?[ \t]*[:=]?[ \t]*", re.IGNORECASE)
_SENTENCE_END = re.compile(r"\.(?:\s|$)")
# "Final Answer: The final answer is 7" (Minerva / lm-eval MATH) and "Final answer: the answer
# is 7" announce one answer twice: a phrase followed by another phrase is not an answer itself
_ANNOUNCED_AGAIN = re.compile(r"[ \t*_:]*(?:the[ \t]+)?(?:final[ \t]+)?answer(?![A-Za-z])", re.IGNORECASE)
# ``A:`` (capital only: ``a:`` labels a part), ``Answer:``/``Final Answer:`` in any case
_A_COLON = re.compile(
    r"^[ \t*#>-]*(?:A|(?i:answer|final answer))[ \t*]*:[ \t*]*([^\n]{1,300})$", re.MULTILINE
)
_PROSE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")
# a number followed by one or two words, a \\text{} group or a parenthesis ("6 dollars")
_LEADING_NUMBER = re.compile(
    r"^(?:\\\$|\$)?[ \t]*(?P<number>[+-]?\d[\d,]*(?:\.\d+)?)[ \t]*\$?[ \t]*"
    r"(?:\\text[ \t]*\{[^{}\d]{0,40}\}|\([^()\d]{0,40}\)|[A-Za-z]+(?:[ \t]+[A-Za-z]+)?)$"
)
_BARE_NUMBER = re.compile(r"^[+-]?\d[\d,]*(?:\.\d+)?$")
_INLINE_MATH = re.compile(r"\$\$?([^$]{1,300}?)\$\$?|\\\((.{1,300}?)\\\)")
_UNCLOSED_BOX = re.compile(r"\\(?:boxed|fbox)[ \t]*\{")
# a box the reader never sees: inside \\phantom/\\hphantom/\\vphantom, or an HTML comment
_HIDING = re.compile(r"\\[hv]?phantom(?![A-Za-z])[ \t]*|<!--")
# a box right after a negation ("the answer is not \\boxed{5}", "x \\neq \\boxed{5}")
_NEGATED_BOX = re.compile(
    r"(?<![A-Za-z])(?:(?i:not|isn't|isn\u2019t|never)|\\neq?(?![A-Za-z])|\u2260)"
    r"(?:[\s*_${]|\\[(\[]){0,20}\\(?:boxed|fbox)(?![A-Za-z])"
)
# the brace-less ``\\boxed 5`` and ``\\boxed5`` (a digit or sign right after the command name)
_SPACE_BOX = re.compile(r"\\(?:boxed|fbox)(?:[ \t]+|(?=[\d+-]))([^\s${}\\]{1,100})")


@dataclass(frozen=True)
class ExtractConfig:
    """Options of :func:`extract_answers`.

    ``forms``: forms tried, in order (the first one present wins). ``max_boxed``: more box
    openings (or different answers of one form) than this flags the response. ``max_answer_chars``: longest
    answer kept; longer box contents are dropped. ``final_line_max_chars``: the final line is
    an answer only when at most this long.
    """

    forms: tuple[AnswerForm, ...] = DEFAULT_FORMS
    max_boxed: int = 16
    max_answer_chars: int = 2000
    final_line_max_chars: int = 120

    def __post_init__(self) -> None:
        unknown = set(self.forms) - set(ALL_FORMS)
        if unknown:
            raise ValueError(f"unknown answer forms {sorted(unknown)}; choose from {ALL_FORMS}")
        if self.max_boxed < 1 or self.max_answer_chars < 1:
            raise ValueError("max_boxed and max_answer_chars must be >= 1")


@dataclass(frozen=True)
class Extraction:
    """The answers a response commits to.

    ``answers`` holds every answer of ``form`` in order of appearance (empty when none).
    ``flag`` names a structural problem that should fail the response whatever its answers:
    ``too_many_boxes``, ``too_many_answers`` (more than ``max_boxed`` different answers of one
    form), ``unclosed_box`` (a box never closed, or whose contents are longer
    than ``max_answer_chars``, and no other box), ``hidden_box`` (a box inside ``\\phantom{}``
    or an HTML comment, which the reader never sees), ``negated_box`` (a box right after
    "not", "isn't", "never" or ``\\neq``: "the answer is not \\boxed{5}"), ``embedded_box``
    (a box that is an operand of the math around it: ``x = -\\boxed{5}``, ``\\boxed{5}^2``) or
    ``questioned_box`` (a box followed by a question mark: "Is it \\boxed{5}?").
    """

    answers: tuple[str, ...]
    form: AnswerForm | None
    flag: str | None = None
    others: tuple[str, ...] = ()
    """Answers the response also commits to in the other explicit forms (boxed, a ``####`` line,
    an ``Answer:``/``Final Answer:`` line) tried after ``form``, in order, leaving out text that
    holds a box or prose (a number with a short remark, ``8 dollars``, is the number ``8``). A
    grader uses them to notice ``\\boxed{7}`` next to ``Final Answer: 8``.
    Running text ("the answer is ...") counts only after the last box or ``####`` line, where it
    takes the answer back ("\\boxed{7}. Wait, the answer is 8."): before it, worked solutions
    use it for intermediate results."""

    @property
    def found(self) -> bool:
        return bool(self.answers)


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
        for opener in _BOX_OPENERS:
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
    openings = sorted((pos, opener) for opener in _BOX_OPENERS for pos in _positions(text, opener))
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


def _clean(answer: str) -> str:
    """Trim decoration around an answer taken from running text."""
    text = answer.strip()
    for _ in range(3):
        before = text
        text = text.strip().strip("*").strip()
        if text.endswith("."):
            text = text[:-1].rstrip()
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "$`\"'":
            text = text[1:-1].strip()
        if text.startswith("\\(") and text.endswith("\\)"):
            text = text[2:-2].strip()
        if text.startswith("\\[") and text.endswith("\\]"):
            text = text[2:-2].strip()
        if text == before:
            break
    return text


def extract_answers(response: str, config: ExtractConfig | None = None) -> Extraction:
    """Every answer ``response`` commits to, by the first form present (see module docstring)."""
    cfg = config if config is not None else ExtractConfig()
    openings = sum(response.count(opener) for opener in _BOX_OPENERS)
    if openings > cfg.max_boxed:
        return Extraction(answers=(), form="boxed", flag="too_many_boxes")
    flag = _box_flag(response, cfg.max_answer_chars) if openings else None
    if flag is not None:
        return Extraction(answers=(), form="boxed", flag=flag)
    spans = _code_spans(response) if openings and ("```" in response or "~~~" in response) else []
    code_boxes = [
        box
        for start, end in spans
        for box in find_boxed(response[start:end], max_answer_chars=cfg.max_answer_chars)
    ]
    if not code_boxes:
        return _extract(response, cfg)
    # a box in a fenced code block is quoted code: the answer is read from the rest, and the
    # code's boxes are only cross-checked against it (or read when nothing else is there)
    masked = list(response)
    for start, end in spans:
        masked[start:end] = [ch if ch == "\n" else " " for ch in response[start:end]]
    found = _extract("".join(masked), cfg)
    boxes = [box.strip() for box in code_boxes]
    if found.flag is not None:
        return found
    if not found.found:
        if "boxed" not in cfg.forms:
            return found
        return Extraction(answers=tuple(boxes), form="boxed")
    return Extraction(
        answers=found.answers, form=found.form, others=(*found.others, *_committed(boxes, found.others, cfg))
    )


def _extract(response: str, cfg: ExtractConfig) -> Extraction:
    for form in cfg.forms:
        answers = _extract_form(response, form, cfg)
        if len(set(answers)) > cfg.max_boxed:
            return Extraction(answers=(), form=form, flag="too_many_answers")
        if answers:
            return Extraction(answers=tuple(answers), form=form, others=_other_answers(response, form, cfg))
        if form == "boxed" and _UNCLOSED_BOX.search(response):
            return Extraction(answers=(), form="boxed", flag="unclosed_box")
    return Extraction(answers=(), form=None)


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


def _box_flag(response: str, limit: int) -> str | None:
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


def _code_spans(response: str) -> list[tuple[int, int]]:
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
            end = m.end() + max(len(opener) for opener in _BOX_OPENERS)
        if any(response.find(opener, m.end(), end) != -1 for opener in _BOX_OPENERS):
            return True
        covered = end
    return False


_COMMITTING: tuple[AnswerForm, ...] = ("boxed", "hash", "a_colon")


def _answers_end(response: str, form: AnswerForm, cfg: ExtractConfig) -> int | None:
    """Where the last answer of ``form`` ends in ``response`` (for "the answer is", the end of
    its line); None for the line forms, which end the response."""
    if form == "boxed":
        spans = boxed_spans(response, cfg.max_answer_chars)
        return max(end for _, end, _ in spans) if spans else None
    pattern = {"hash": _HASH, "a_colon": _A_COLON, "answer_is": _ANSWER_IS}.get(form)
    last = None if pattern is None else next(reversed(list(pattern.finditer(response))), None)
    if last is None:
        return None
    if form == "answer_is":
        line_end = response.find("\n", last.end())
        return len(response) if line_end == -1 else line_end
    return last.end()


def _other_answers(response: str, chosen: AnswerForm, cfg: ExtractConfig) -> tuple[str, ...]:
    """Answers of the explicit forms after ``chosen`` in ``cfg.forms``, and "the answer is X"
    or a bare number ending the text after the last answer of ``chosen`` (a retraction:
    "\\boxed{5} ... wait, the answer is 6"); text holding a box (the box is the boxed form's
    answer) or prose words is left out."""
    later = cfg.forms[cfg.forms.index(chosen) + 1 :]
    sources = [(form, response) for form in later if form in _COMMITTING]
    end = _answers_end(response, chosen, cfg)
    tail = response[end:] if end is not None else ""
    if tail and "answer_is" in cfg.forms and chosen != "answer_is":
        sources.append(("answer_is", tail))
    found: list[str] = []
    for form, text in sources:
        found.extend(_committed(_extract_form(text, form, cfg), found, cfg))
    if tail and "final_line" in cfg.forms:
        # a bare number on the last lines after it ("\\boxed{5}\n\n6") is a second answer too
        bare = [a for a in _extract_form(tail, "final_line", cfg) if _BARE_NUMBER.match(a)]
        found.extend(_committed(bare, found, cfg))
    return tuple(found[: cfg.max_boxed])


def _committed(answers: Sequence[str], seen: Sequence[str], cfg: ExtractConfig) -> list[str]:
    """``answers`` that commit to something: not empty, not yet ``seen``, holding no box and no
    prose words (a number with a short remark, ``6 dollars``, commits to the number); at most
    ``max_boxed``."""
    kept: list[str] = []
    for answer in answers:
        if _PROSE_WORD.search(answer.replace("\\text", "")):
            # "6 dollars", "$6$ apples", "6 (six)": a number and a short remark commit to the number
            leading = _LEADING_NUMBER.match(answer)
            if leading is None:
                continue
            answer = leading.group("number")
        if not answer or answer in seen or answer in kept or any(opener in answer for opener in _BOX_OPENERS):
            continue
        kept.append(answer)
    return kept[: cfg.max_boxed]


def _extract_form(response: str, form: AnswerForm, cfg: ExtractConfig) -> list[str]:
    if form == "boxed":
        if "\\boxed" not in response and "\\fbox" not in response:
            return []
        return [b.strip() for b in find_boxed(response, max_answer_chars=cfg.max_answer_chars)]
    if form == "hash":
        return [_clean(m.group(1)) for m in _HASH.finditer(response)]
    if form == "answer_is":
        found: list[str] = []
        for m in _ANSWER_IS.finditer(response):
            end = response.find("\n", m.end(), m.end() + 300)
            stretch = response[m.end() : end if end != -1 else m.end() + 300]
            if _ANNOUNCED_AGAIN.match(stretch):
                continue
            stop = _SENTENCE_END.search(stretch)
            answer = _clean(stretch[: stop.start()] if stop else stretch)
            if answer:
                found.append(answer)
        return found
    if form == "a_colon":
        return [a for a in (_clean(m.group(1)) for m in _A_COLON.finditer(response)) if a]
    tail = response[-2000:]
    lines = [line for line in tail.splitlines() if line.strip()]
    if not lines:
        return []
    if form == "final_line":
        # the last line, and the short non-prose lines right above it: "5\n6" and "5\nor\n6"
        # end in several candidate lines, not one answer
        run: list[str] = []
        for line in reversed(lines):
            answer = _clean(line)
            if (
                not answer
                or len(answer) > cfg.final_line_max_chars
                or _PROSE_WORD.search(answer.replace("\\text", ""))
            ):
                break
            if run and not any(ch.isalnum() for ch in answer):
                break  # a rule or a fence above the last line ends the run
            run.append(answer)
        return run[::-1]
    segments = [m.group(1) or m.group(2) for m in _INLINE_MATH.finditer("\n".join(lines[-3:]))]
    segments = [seg for seg in segments if seg and "=" in seg]
    if not segments:
        return []
    value = _clean(segments[-1].rsplit("=", 1)[-1])
    return [value] if value else []


def apply_policy(
    answers: Sequence[str], policy: MultiAnswerPolicy, same: Callable[[str, str], bool]
) -> tuple[str | None, bool]:
    """Apply a multiple-answer policy.

    Returns ``(answer, conflict)``: the answer to grade and whether the response committed to
    several answers that ``same`` says differ (under ``reject`` a conflict must fail).
    """
    if not answers:
        return None, False
    if policy == "first":
        return answers[0], False
    if policy == "last":
        return answers[-1], False
    last = answers[-1]
    distinct: list[str] = []
    for answer in answers:
        if answer not in distinct:
            distinct.append(answer)
    conflict = any(not same(other, last) for other in distinct if other != last)
    return last, conflict
