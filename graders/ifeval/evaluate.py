"""Checking a response against a prompt's instructions, in IFEval's strict and loose modes.

- **strict**: the checker runs on the response as given (a blank response follows nothing).
- **loose**: an instruction is followed when the checker accepts any of IFEval's eight variants
  of the response (first and/or last line removed, with and without every ``*``).

Prompt level: ``prompt_strict``/``prompt_loose`` are true when every instruction is followed.

``hardened=True`` (not the default, which is reference-exact) reads every instruction on what a
reader sees: folded typography (:mod:`graders.typography`; the language is detected unfolded,
which would turn Russian into Latin) and words counted in :func:`graders.reader.reader_view`,
so a required keyword must be seen and a forbidden word or a comma fails in the markup or in
what it renders. The reasons: docs/graders-text.md, "hardened".
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graders.ifeval.checkers import CHECKERS, Checker, InvalidInstructionError
from graders.reader import reader_view
from graders.typography import canonical_text, strip_invisible

__all__ = ["DEFAULT_MAX_CHARS", "IFEvalVerdict", "check", "loose_variants"]

DEFAULT_MAX_CHARS = 200_000
"""Responses longer than this follow no instruction (a guard against huge outputs)."""


@dataclass(frozen=True)
class IFEvalVerdict:
    """The verdict on one response: per-instruction lists aligned with ``instruction_ids``."""

    instruction_ids: tuple[str, ...]
    strict: tuple[bool, ...]
    loose: tuple[bool, ...]
    reason: str = ""

    @property
    def prompt_strict(self) -> bool:
        """Every instruction followed in strict mode."""
        return all(self.strict)

    @property
    def prompt_loose(self) -> bool:
        """Every instruction followed in loose mode."""
        return all(self.loose)

    @property
    def fraction_strict(self) -> float:
        """Fraction of instructions followed in strict mode (1.0 for an empty instruction list)."""
        return sum(self.strict) / len(self.strict) if self.strict else 1.0

    @property
    def fraction_loose(self) -> float:
        """Fraction of instructions followed in loose mode (1.0 for an empty instruction list)."""
        return sum(self.loose) / len(self.loose) if self.loose else 1.0


def loose_variants(response: str) -> tuple[str, ...]:
    """The eight variants of ``response`` that loose mode tries, in IFEval's order."""
    lines = response.split("\n")
    remove_first = "\n".join(lines[1:]).strip()
    remove_last = "\n".join(lines[:-1]).strip()
    remove_both = "\n".join(lines[1:-1]).strip()
    return (
        response,
        response.replace("*", ""),
        remove_first,
        remove_last,
        remove_both,
        remove_first.replace("*", ""),
        remove_last.replace("*", ""),
        remove_both.replace("*", ""),
    )


_SEEN_WORDS = frozenset({"keywords:existence", "keywords:frequency", "keywords:letter_frequency"})
_FORBIDDEN = frozenset({"keywords:forbidden_words", "punctuation:no_comma"})


def _view_kinds(instruction_id: str) -> tuple[str, ...]:
    """The views an instruction must hold on in hardened mode (all of them)."""
    if instruction_id == "language:response_language":
        return ("unfolded",)
    if instruction_id in _SEEN_WORDS:
        return ("rendered",)  # words a reader sees: not in comments, hidden elements, link definitions
    if instruction_id in _FORBIDDEN:
        return ("folded", "rendered")  # forbidden in the markup and in what it shows
    return ("folded",)  # formats are written in the markup (bullets, highlights, sections)


def _view(response: str, kind: str) -> str:
    """The response as the hardened mode reads it for one kind of instruction."""
    if kind == "as_given":
        return response
    if kind == "unfolded":
        return strip_invisible(unicodedata.normalize("NFKC", response))
    if kind == "rendered":
        return reader_view(response)
    return canonical_text(response)


def _clean_kwargs(raw: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InvalidInstructionError(f"instruction kwargs must be a mapping, got {type(raw).__name__}")
    # The Hugging Face copy of IFEval stores every possible key, with None for the unused ones.
    return {str(k): v for k, v in raw.items() if v is not None}


def _follows(checker: Checker, text: str, args: Mapping[str, Any], prompt: str) -> bool:
    """The checker's verdict; a checker that runs out of time on the text (a library's regular
    expression limit) has not seen the instruction followed: the response's failure."""
    try:
        return checker(text, args, prompt)
    except TimeoutError:
        return False


def check(
    response: str,
    *,
    instruction_id_list: Sequence[str],
    kwargs: Sequence[Mapping[str, Any] | None],
    prompt: str,
    max_chars: int = DEFAULT_MAX_CHARS,
    hardened: bool = False,
) -> IFEvalVerdict:
    """Check ``response`` against each instruction, strict and loose.

    Raises :class:`~graders.ifeval.checkers.InvalidInstructionError` for an unknown instruction
    id or mismatched/invalid ``kwargs`` (a task bug); bad model output never raises.
    """
    ids = tuple(instruction_id_list)
    if len(ids) != len(kwargs):
        raise InvalidInstructionError(f"{len(ids)} instruction ids but {len(kwargs)} kwargs entries")
    unknown = [i for i in ids if i not in CHECKERS]
    if unknown:
        raise InvalidInstructionError(
            f"unknown IFEval instruction id(s) {unknown}; known: {sorted(CHECKERS)}"
        )
    if not isinstance(response, str):
        raise TypeError(f"response must be a str, got {type(response).__name__}")
    if len(response) > max_chars:
        failed = tuple(False for _ in ids)
        return IFEvalVerdict(ids, failed, failed, reason=f"response longer than {max_chars} characters")
    views: dict[str, tuple[str, tuple[str, ...]]] = {}
    strict: list[bool] = []
    loose: list[bool] = []
    for instruction_id, raw in zip(ids, kwargs, strict=True):
        checker = CHECKERS[instruction_id]
        args = _clean_kwargs(raw)
        followed_all = loose_all = True
        for kind in _view_kinds(instruction_id) if hardened else ("as_given",):
            if kind not in views:
                text = _view(response, kind)
                views[kind] = (text, tuple(v for v in loose_variants(text)[1:] if v.strip()))
            text, others = views[kind]
            followed = bool(text.strip()) and _follows(checker, text, args, prompt)
            followed_all = followed_all and followed
            loose_all = loose_all and (followed or any(_follows(checker, v, args, prompt) for v in others))
        strict.append(followed_all)
        loose.append(loose_all)
    followed_count = sum(strict)
    reason = f"{followed_count}/{len(ids)} instructions followed (strict), {sum(loose)}/{len(ids)} (loose)"
    return IFEvalVerdict(ids, tuple(strict), tuple(loose), reason=reason)
