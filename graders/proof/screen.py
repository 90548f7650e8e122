"""Static anti-cheat screen: from a model's response to the exact source the kernel will check.

:func:`prepare` takes the task's statement and the model's response and returns a
:class:`Prepared` source or a ``failed`` :class:`~graders.proof.verdict.ProofVerdict` with the
reason. The source always contains the task's own statement text, which the model may only
restate verbatim. Rejected before any checker runs: a differing restatement or a theorem declared
twice; ``sorry``/``admit``/``Admitted`` and equivalents, axiom declarations, ``native_decide``
(unless allowed), kernel-bypassing options and meta-programming; and, ahead of the statement,
notation, instances, scopes, options, namespaces or a redefinition of a name the statement uses.

Text the model prints plays no part: verdicts come from the checker's structured output only.
This screen is a first line; the kernel re-check (Coq's ``Check.v``,
:mod:`graders.proof.lean_check`) and the axiom listing are the ground truth (docs/proofs.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graders.proof.forbidden import AHEAD_FORBIDDEN, check_tokens, forbidden_in, token_re
from graders.proof.policy import ProofPolicy
from graders.proof.source import Language, blank_strings, strip_comments
from graders.proof.verdict import ProofVerdict

__all__ = ["Prepared", "Statement", "extract_code", "forbidden_in", "parse_statement", "prepare"]

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_'.]*")

_COQ_DECL = r"(?:Theorem|Lemma|Fact|Remark|Corollary|Proposition|Example)"
_LEAN_DECL = r"(?:theorem|lemma)"
_COQ_OPTION = re.compile(r"(?<![\w.'])((?:Set|Unset)\s+[A-Z]\w*)")  # `Set Implicit ...`, not the sort `Set`
_DEF_KEYWORDS: dict[str, str] = {
    "coq": r"(?:Definition|Fixpoint|CoFixpoint|Inductive|CoInductive|Variant|Record|Structure|Class"
    r"|Let|Theorem|Lemma|Fact|Remark|Corollary|Proposition|Example)",
    "lean": r"(?:def|abbrev|theorem|lemma|inductive|structure|class|opaque|instance)",
}
_KEYWORDS = frozenset(
    {
        "forall",
        "exists",
        "fun",
        "match",
        "with",
        "end",
        "let",
        "in",
        "if",
        "then",
        "else",
        "Prop",
        "Type",
        "Set",
        "Sort",
        "by",
        "theorem",
        "lemma",
        "Theorem",
        "Lemma",
    }
)


@dataclass(frozen=True)
class Statement:
    """A task's theorem statement: ``theorem NAME SIGNATURE`` (Lean) / ``Theorem NAME SIG.`` (Coq)."""

    language: Language
    text: str
    name: str
    signature: str

    @property
    def identifiers(self) -> frozenset[str]:
        """Names the statement uses (whole and last component), keywords excluded."""
        names: set[str] = {self.name}
        for tok in _IDENT.findall(self.signature):
            tok = tok.rstrip(".")
            if tok and tok not in _KEYWORDS:
                names.add(tok)
                names.add(tok.rsplit(".", 1)[-1])
        return frozenset(names)


@dataclass(frozen=True)
class Prepared:
    """The exact source to check, and where the task's statement sits in it."""

    statement: Statement
    preamble: str
    body: str
    source: str


def _norm(text: str) -> str:
    return " ".join(text.split())


def parse_statement(text: str, language: Language) -> Statement:
    """Parse a task statement; raises ``ValueError`` if it is not a single theorem header."""
    decl = _COQ_DECL if language == "coq" else _LEAN_DECL
    m = re.match(rf"\s*{decl}\s+([A-Za-z_][\w'.]*)(.*)$", text, re.DOTALL)
    if not m:
        raise ValueError(f"not a theorem statement: {text[:80]!r}")
    sig = m.group(2).strip()
    if language == "coq":
        if not sig.endswith("."):
            raise ValueError("a Coq statement ends with '.'")
        sig = sig[:-1].strip()
    elif ":=" in sig:
        raise ValueError("a Lean statement has no ':=' (the proof is the model's part)")
    return Statement(language=language, text=text.strip(), name=m.group(1), signature=sig)


def extract_code(response: str) -> str:
    """The code of a response: the last fenced block (one naming the theorem preferred)."""
    blocks = [b for _, b in _FENCE.findall(response)]
    if not blocks:
        return response.strip()
    return str(blocks[-1]).strip()


def _statement_end(scan: str, start: int, language: Language) -> int | None:
    """Offset just past the statement's signature (Coq: after '.', Lean: before ':=')."""
    if language == "coq":
        m = re.compile(r"\.(?=\s|$)").search(scan, start)
        return None if m is None else m.end()
    depth = 0
    i = start
    while i < len(scan) - 1:
        ch = scan[i]
        if ch in "([{⟨":
            depth += 1
        elif ch in ")]}⟩":
            depth -= 1
        elif depth == 0 and scan[i : i + 2] == ":=":
            return i
        i += 1
    return None


def _strip_lean_imports(code: str, imports: tuple[str, ...]) -> tuple[str, str | None]:
    allowed = {i.strip() for i in imports}
    kept: list[str] = []
    for line in code.splitlines():
        stripped = line.strip()
        if stripped.startswith("import "):
            if stripped not in allowed:
                return code, f"the proof adds `{stripped}`; imports are fixed by the task"
            kept.append("")
            continue
        kept.append(line)
    return "\n".join(kept), None


def prepare(
    statement: Statement, response: str, *, policy: ProofPolicy, imports: tuple[str, ...] = ()
) -> Prepared | ProofVerdict:
    """Screen ``response`` and build the source to check, or a ``failed`` verdict with a reason."""
    lang = statement.language
    code = strip_comments(extract_code(response), lang)
    if lang == "lean":
        code, why = _strip_lean_imports(code, imports)
        if why:
            return ProofVerdict.failed(why)
    if not code.strip():
        return ProofVerdict.failed("empty proof")
    scan = blank_strings(code, lang)
    why = forbidden_in(code, lang, policy)
    if why:
        return ProofVerdict.failed(why)

    decl = _COQ_DECL if lang == "coq" else _LEAN_DECL
    hits = list(re.finditer(rf"(?<![\w.']){decl}\s+{re.escape(statement.name)}(?![\w'!?])", scan))
    if len(hits) > 1:
        return ProofVerdict.failed(f"`{statement.name}` is declared {len(hits)} times")
    if hits:
        hit = hits[0]
        end = _statement_end(scan, hit.end(), lang)
        if end is None:
            return ProofVerdict.failed("could not find where the restated statement ends")
        sig = code[hit.end() : end]
        sig = sig.strip()[:-1] if lang == "coq" else sig
        if _norm(sig) != _norm(statement.signature):
            return ProofVerdict.failed(
                f"the statement was changed: expected `{_norm(statement.signature)}`, got `{_norm(sig)}`"
            )
        preamble, body = code[: hit.start()], code[end:]
        if lang == "lean":
            body = body[2:]  # drop ':='
        why = _screen_preamble(scan[: hit.start()], statement)
        if why:
            return ProofVerdict.failed(why)
    else:
        preamble, body = "", code
        if token_re("Qed").search(scan) is None and lang == "coq" and not re.search(r"\bDefined\.", scan):
            body = f"Proof.\n{code.strip()}\nQed."
        if lang == "lean" and not _looks_like_term(scan):
            body = "by\n" + "\n".join("  " + line for line in code.strip().splitlines())
    glue = "\n" if lang == "coq" else " := "
    source = f"{preamble.rstrip()}\n{statement.text}{glue}{body.strip()}".strip("\n")
    return Prepared(statement=statement, preamble=preamble, body=body, source=source)


def _looks_like_term(code: str) -> bool:
    """A bare Lean proof is a term if it starts like one (``by``, ``fun``, ``⟨``, ``h.elim``...)."""
    text = code.strip()
    if re.match(r"(by|fun|λ|show|calc|match)\b|[⟨(@]", text):
        return True
    first = text.split(None, 1)[0] if text else ""
    return "." in first.rstrip(".")


def _screen_preamble(scan: str, statement: Statement) -> str | None:
    lang = statement.language
    option = _COQ_OPTION.search(scan) if lang == "coq" else None
    if option:
        return f"forbidden `{option.group(1)}` (an option) ahead of the statement"
    why = check_tokens(scan, AHEAD_FORBIDDEN[lang], "ahead of the statement")
    if why:
        return why
    for m in re.finditer(rf"(?<![\w.']){_DEF_KEYWORDS[lang]}\s+([A-Za-z_][\w'.]*)", scan):
        name = m.group(1)
        if name in statement.identifiers or name.rsplit(".", 1)[-1] in statement.identifiers:
            return f"`{name}` is redefined ahead of the statement, which uses it"
    return None
