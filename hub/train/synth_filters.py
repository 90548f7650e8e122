"""The checks a synthesised task must pass: parsing, a reference solver, near-duplicates, contamination.

- :func:`parse_candidate` reads a model's ``{"prompt": ..., "answer": ...}`` and validates it as a
  :class:`~hub.env.types.Task`.
- :func:`solver_for` returns the environment's own solver where verihub knows one (``arith``:
  the expression is evaluated by a small integer parser, never ``eval``; ``textops``: the
  prompt is matched against the environment's own operation templates), else None.
- :class:`NearDuplicates` is MinHash-LSH over word shingles (``datasketch``), each candidate
  checked against the threshold.
- :class:`Contamination` flags a text sharing any word ``n``-gram with a reference set.
- :func:`load_tasks` reads a task file (``tasks.jsonl``) back as tasks.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from hub.env import Environment, Task, UsageError

__all__ = [
    "Contamination",
    "NearDuplicates",
    "Solver",
    "benchmark_questions",
    "json_objects",
    "load_tasks",
    "parse_candidate",
    "shingles",
    "solver_for",
]

Solver = Callable[[str], tuple[str, dict[str, Any]] | None]
"""``solve(prompt)`` -> (reference answer, task metadata), or None when the prompt is not one it
can solve."""

_TOKEN = re.compile(r"\w+|[^\w\s]")
_WORD = re.compile(r"\w+")
MAX_FIELD_CHARS = 4000


def json_objects(text: str) -> Iterator[Any]:
    """Every JSON value in ``text`` that starts at a ``{``, in order (prose around them is skipped)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start >= 0:
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        yield value
        start = text.find("{", end)


def parse_candidate(text: str, task_id: str) -> Task | None:
    """The task in a model's reply (the first JSON object with a ``prompt`` and an ``answer``),
    validated as a :class:`Task`; None if there is none."""
    data = next(
        (v for v in json_objects(text) if isinstance(v, dict) and {"prompt", "answer"} <= v.keys()), None
    )
    if data is None:
        return None
    prompt, answer = data["prompt"], data["answer"]
    if isinstance(answer, bool) or not isinstance(answer, (str, int)):
        return None
    if not isinstance(prompt, str) or not prompt.strip() or len(prompt) > MAX_FIELD_CHARS:
        return None
    answer_text = str(answer).strip()
    if not answer_text or len(answer_text) > MAX_FIELD_CHARS:
        return None
    try:
        return Task.model_validate({"id": task_id, "prompt": prompt.strip(), "answer": answer_text})
    except ValidationError:
        return None


# --- solvers ---------------------------------------------------------------------------------

_ARITH = re.compile(r"Compute (.{1,200})\. Reply with the final answer as: Answer: <integer>")
_ARITH_TOKEN = re.compile(r"\s*(\d{1,12}|[-+*/()])")


def _arith_value(expr: str) -> int | None:
    """The value of an integer expression (+ - * /, parentheses; exact division only)."""
    tokens: list[str] = []
    pos = 0
    while pos < len(expr):
        m = _ARITH_TOKEN.match(expr, pos)
        if m is None:
            return None if expr[pos:].strip() else _finish(tokens)
        tokens.append(m.group(1))
        pos = m.end()
    return _finish(tokens)


def _finish(tokens: list[str]) -> int | None:
    at = 0

    def atom() -> int | None:
        nonlocal at
        if at >= len(tokens):
            return None
        tok = tokens[at]
        at += 1
        if tok.isdigit():
            return int(tok)
        if tok == "(":
            value = expression()
            if value is None or at >= len(tokens) or tokens[at] != ")":
                return None
            at += 1
            return value
        return None

    def term() -> int | None:
        nonlocal at
        value = atom()
        while value is not None and at < len(tokens) and tokens[at] in "*/":
            op = tokens[at]
            at += 1
            right = atom()
            if right is None:
                return None
            if op == "*":
                value *= right
            elif right == 0 or value % right:
                return None  # not an exact integer quotient
            else:
                value //= right
        return value

    def expression() -> int | None:
        nonlocal at
        value = term()
        while value is not None and at < len(tokens) and tokens[at] in "+-":
            op = tokens[at]
            at += 1
            right = term()
            if right is None:
                return None
            value = value + right if op == "+" else value - right
        return value

    result = expression()
    return result if at == len(tokens) else None


def _solve_arith(prompt: str) -> tuple[str, dict[str, Any]] | None:
    m = _ARITH.fullmatch(prompt.strip())
    value = None if m is None else _arith_value(m.group(1))
    return None if m is None or value is None else (str(value), {"expression": m.group(1)})


_WORD_SLOT = "([A-Za-z]{1,64})"


def _textops_solver(module: Any) -> Solver | None:
    levels = getattr(module, "LEVELS", None)
    suffix = getattr(module, "_SUFFIX", None)
    if levels is None or not isinstance(suffix, str):
        return None
    patterns = []
    for level, (_, operations) in levels.items():
        for op in operations:
            pattern = re.escape(op.template).replace(r"\{w\}", _WORD_SLOT).replace(r"\{c\}", "([A-Za-z])")
            patterns.append((re.compile(pattern + re.escape(suffix)), op, level))

    def solve(prompt: str) -> tuple[str, dict[str, Any]] | None:
        for pattern, op, level in patterns:
            m = pattern.fullmatch(prompt.strip())
            if m is None:
                continue
            # the template names the letter before the word ("... letter '{c}' appear in '{w}'")
            groups = m.groups()
            word, letter = (groups[1], groups[0]) if op.uses_letter else (groups[0], "")
            meta = {
                "operation": op.name,
                "kind": op.kind,
                "case_sensitive": op.case_sensitive,
                "difficulty": level,
            }
            return str(op.answer(word, letter)), meta
        return None

    return solve


def solver_for(env: Environment) -> Solver | None:
    """The environment's own solver where verihub knows one (arith, textops), else None."""
    if env.id == "arith":
        return _solve_arith
    if env.id == "textops":
        try:
            return _textops_solver(importlib.import_module(type(env).__module__))
        except ImportError:
            return None
    return None


# --- near-duplicates and contamination ----------------------------------------------------------


def shingles(text: str, size: int = 3) -> set[str]:
    """Word ``size``-shingles of ``text`` (lower case, punctuation as words)."""
    words = _TOKEN.findall(text.lower())
    if len(words) <= size:
        return {" ".join(words)}
    return {" ".join(words[i : i + size]) for i in range(len(words) - size + 1)}


class NearDuplicates:
    """MinHash-LSH over word shingles: :meth:`match` names an indexed text at estimated Jaccard
    similarity ``>= threshold``."""

    def __init__(self, threshold: float = 0.8, *, num_perm: int = 128, shingle: int = 3) -> None:
        try:
            from datasketch import MinHashLSH
        except ImportError:
            raise UsageError("duplicate screening needs datasketch: pip install 'verihub[synth]'") from None

        self.threshold = threshold
        self.num_perm = num_perm
        self.shingle = shingle
        self._lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
        self._hashes: dict[str, Any] = {}

    def _minhash(self, text: str) -> Any:
        from datasketch import MinHash

        mh = MinHash(num_perm=self.num_perm, seed=1)
        mh.update_batch([s.encode() for s in shingles(text, self.shingle)])
        return mh

    def match(self, text: str) -> str | None:
        """An indexed text whose estimated similarity reaches the threshold (the LSH bands only
        propose candidates: each is checked, so texts sharing a long fixed part are not taken
        for copies), or None."""
        mh = self._minhash(text)
        found = sorted(k for k in self._lsh.query(mh) if mh.jaccard(self._hashes[k]) >= self.threshold)
        return str(found[0]) if found else None

    def add(self, key: str, text: str) -> None:
        if key not in self._hashes:
            self._hashes[key] = self._minhash(text)
            self._lsh.insert(key, self._hashes[key])


class Contamination:
    """The hashes of every word ``n``-gram of a reference set; :meth:`hits` counts a text's shared ones."""

    def __init__(self, n: int = 13) -> None:
        self.n = n
        self._grams: set[bytes] = set()
        self.sources: dict[str, int] = {}

    def _grams_of(self, text: str) -> Iterator[bytes]:
        words = _WORD.findall(text.lower())
        for i in range(len(words) - self.n + 1):
            yield hashlib.blake2b(" ".join(words[i : i + self.n]).encode(), digest_size=8).digest()

    def add(self, source: str, texts: Iterable[str]) -> None:
        count = 0
        for text in texts:
            self._grams.update(self._grams_of(text))
            count += 1
        self.sources[source] = self.sources.get(source, 0) + count

    def hits(self, text: str) -> int:
        return sum(1 for g in self._grams_of(text) if g in self._grams)


_BENCHMARK_FIELDS = {"gsm8k": "question", "math500": "problem", "aime24": "problem", "amc23": "problem"}


def benchmark_questions(data_dir: Path) -> Iterator[tuple[str, str]]:
    """(benchmark, question) of every test row of gsm8k, math500, aime24 and amc23 under ``data_dir``."""
    for name, key in _BENCHMARK_FIELDS.items():
        path = data_dir / name / "test.jsonl"
        if not path.is_file():
            continue
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    value = json.loads(line).get(key)
                    if isinstance(value, str):
                        yield name, value


def load_tasks(path: str | Path) -> list[Task]:
    """The tasks of a task file (one JSON ``Task`` a line, as ``verihub synth`` writes ``tasks.jsonl``),
    each validated. ``SingleTurnEnv(id=..., tasks={"synth": load_tasks(p)}, grader=...)`` serves
    them as a split."""
    out = []
    with Path(path).open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if line.strip():
                try:
                    out.append(Task.model_validate_json(line))
                except ValidationError as exc:
                    raise ValueError(f"{path}:{number}: not a task: {exc.errors()[0]['msg']}") from None
    return out
