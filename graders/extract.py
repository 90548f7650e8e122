"""Generic final-answer extraction from free-form model responses.

:func:`extract_answers` finds every answer a response commits to, in the first form present
(:class:`ExtractConfig` chooses the forms and their order): ``boxed`` (every closed
``\\boxed{...}``/``\\fbox{...}``), ``hash`` (``#### N``), ``answer_is`` ("the answer is X"),
``a_colon`` (``Answer: X``), ``final_line`` (a short last line that is not prose) and the opt-in
``last_math`` (the right side of the last ``=`` in the last ``$...$``). It returns *all* answers
of that form; :func:`apply_policy` applies the caller's :data:`MultiAnswerPolicy` (``reject`` by
default: several different answers fail). The rules in full: docs/graders-math.md, "What is checked".

A box a reader does not see as the answer (hidden, negated, questioned, inside an expression;
:mod:`graders.boxes`, re-exported here) flags the response; a box in a fenced code block is read
only when nothing else answers. Hostile inputs are cheap: too many box openings are flagged
unscanned, brace scans are bounded and every regex is linear. Nothing here evaluates anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from graders.alternatives import HEDGE_LINE, alternative_lines
from graders.boxes import BOX_OPENERS, box_flag, box_in_context, boxed_spans, code_spans, find_boxed

__all__ = [
    "ALL_FORMS",
    "DEFAULT_FORMS",
    "AnswerForm",
    "ExtractConfig",
    "Extraction",
    "MultiAnswerPolicy",
    "answer_value",
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
# the mathematical start of a line: symbols, one- or two-letter names, LaTeX commands; no prose
_MATH_LEAD = re.compile(r"(?:[^A-Za-z\n\\]|\\[A-Za-z]+|(?<![A-Za-z])[A-Za-z]{1,2}(?![A-Za-z]))*")
_NUMBER_TOKEN = re.compile(r"(?<![\w.\\])[+-]?\d[\d,]*(?:\.\d+)?(?![\w.]?\d)")
_BARE_NUMBER = re.compile(r"^[+-]?\d[\d,]*(?:\.\d+)?$")
_INLINE_MATH = re.compile(r"\$\$?([^$]{1,300}?)\$\$?|\\\((.{1,300}?)\\\)")
# "The final answer is:" then a fenced block of one short line: the block is the answer, shown
# as code ("```\n42\n```"), not quoted code
_ANSWER_FENCE = re.compile(
    r"(?P<cue>answer(?:[ \t]+is)?[ \t*]*:)[ \t*]*\n[ \t]*(?P<fence>```|~~~)[A-Za-z]*[ \t]*\n"
    r"[ \t]*(?P<answer>[^\n`~]{1,80}?)[ \t]*\n[ \t]*(?P=fence)[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_UNCLOSED_BOX = re.compile(r"\\(?:boxed|fbox)[ \t]*\{")


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
    if "```" in response or "~~~" in response:
        response = _ANSWER_FENCE.sub(r"\g<cue> \g<answer>", response)
    openings = sum(response.count(opener) for opener in BOX_OPENERS)
    if openings > cfg.max_boxed:
        return Extraction(answers=(), form="boxed", flag="too_many_boxes")
    flag = box_flag(response, cfg.max_answer_chars) if openings else None
    if flag is not None:
        return Extraction(answers=(), form="boxed", flag=flag)
    spans = code_spans(response) if openings and ("```" in response or "~~~" in response) else []
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
    for line in alternative_lines(tail) if tail else ():
        # "\\boxed{7}" then "or 8" / "Alternatively, $8$.": an alternative after the answer is
        # one more commitment (the same rule as graders.exact)
        values = [b.strip() for b in find_boxed(line, max_answer_chars=cfg.max_answer_chars)]
        values += [m.group(1) or m.group(2) for m in _INLINE_MATH.finditer(line)]
        values += _NUMBER_TOKEN.findall(line)
        if not values:  # "or p - q + 1", "Maybe q - r though.": the math after the hedge word
            rest = HEDGE_LINE.sub("", line, count=1).strip(" \t,:(")
            lead = _MATH_LEAD.match(rest)
            values = [_clean(lead.group(0).strip(" \t,:().")) if lead else ""]
        found.extend(_committed([v.strip() for v in values if v and v.strip()], found, cfg))
    if tail and "final_line" in cfg.forms:
        # a bare number on the last lines after it ("\\boxed{5}\n\n6") is a second answer too
        bare = [a for a in _extract_form(tail, "final_line", cfg) if _BARE_NUMBER.match(a)]
        found.extend(_committed(bare, found, cfg))
    return tuple(found[: cfg.max_boxed])


def answer_value(answer: str, config: ExtractConfig | None = None) -> str | None:
    """``answer`` as a committed value: itself when it holds no prose words, its leading number
    when it is a number with a short remark (``6 dollars``), None otherwise (prose, a box)."""
    kept = _committed([answer.strip()], (), config if config is not None else ExtractConfig())
    return kept[0] if kept else None


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
        if not answer or answer in seen or answer in kept or any(opener in answer for opener in BOX_OPENERS):
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
