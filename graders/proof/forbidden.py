"""What a proof may not contain: the forbidden constructs of Coq and Lean, and the scan for them.

:func:`forbidden_in` looks for them in a proof with comments and string contents blanked
(:mod:`graders.proof.source`): admitted proofs and axioms, kernel-bypassing options, meta-programming,
commands that read or write files (Coq's ``Load``, ``Redirect``, ``Extraction``, a ``Require`` of a
path, ``Print Universes`` to a file...; the checkers also run confined, :mod:`graders.proof.confine`),
``native_decide`` unless allowed, and Lean attributes that register code. :data:`AHEAD_FORBIDDEN`
lists what may not stand ahead of the task's statement. Used by :mod:`graders.proof.screen`.
"""

from __future__ import annotations

import re

from graders.proof.policy import ProofPolicy
from graders.proof.source import Language, blank_strings, strip_comments

__all__ = ["AHEAD_FORBIDDEN", "check_tokens", "forbidden_in", "token_re"]

_FORBIDDEN: dict[str, tuple[str, ...]] = {
    "coq": (
        "Admitted",
        "admit",
        "Abort",
        "Admit",
        "Axiom",
        "Axioms",
        "Parameter",
        "Parameters",
        "Conjecture",
        "Conjectures",
        "Hypothesis",
        "Hypotheses",
        "Variable",
        "Variables",
        "Context",
        "Primitive",
        "Register",
        "give_up",
        "Load",
        "Cd",
        "Redirect",
        "Extraction",
        "Extract",
        "Drop",
        "bypass_check",
        "Declare ML Module",
        "LoadPath",
        "ML Path",
        "Guard Checking",
        "Positivity Checking",
        "Universe Checking",
        "Print Assumptions",
        # commands that read or write files or probe the file system (the checker also runs
        # confined, with one private writable directory: graders.proof.confine)
        "Pwd",
        "Print Universes",  # `Print Universes "graph.dot".` writes the graph to a file
        "Locate File",
        "Locate Library",
        "Comments",
        "Write State",
        "Restore State",
        "Print ML",
        "Backtrack",
        "Reset Initial",
    ),
    "lean": (
        "sorry",
        "admit",
        "sorryAx",
        "axiom",
        "unsafe",
        "implemented_by",
        "extern",
        "import",
        "run_cmd",
        "run_tac",
        "run_elab",
        "run_meta",
        "#eval",
        "#exit",
        "elab",
        "elab_rules",
        "macro",
        "macro_rules",
        "syntax",
        "declare_syntax_cat",
        "addDecl",
        "modifyEnv",
        "Lean.Environment",
        "Lean.Elab",
        "Lean.Meta",
        "ofReduceBool",
        "ofReduceNat",
        "trustCompiler",
        "debug",
        # syntax and elaboration extensions: they could change what the statement means
        "notation",
        "notation3",
        "infix",
        "infixl",
        "infixr",
        "prefix",
        "postfix",
        "binder_predicate",
        "unif_hint",
        "simproc",
        "dsimproc",
        "simproc_decl",
        "dsimproc_decl",
        "delab",
        "app_delab",
        "app_unexpander",
        "csimp",
        "default_instance",
        "initialize",
        "builtin_initialize",
        "register_option",
        "register_simp_attr",
        "declare_simp_like_tactic",
        "hygiene",
        # scopes that would carry hypotheses or another namespace into the checker's re-check
        "variable",
        "include",
        "omit",
        "namespace",
        "section",
        "end",
        # resource limits are the checker's, not the proof's
        "maxHeartbeats",
        "maxRecDepth",
        "synthInstance",
        "#guard_msgs",
        "#guard",
        "#print",
        "trace",
        "dbg_trace",
        "logInfo",
        # meta-programming reached without the words above: `_root_.Lean.Elab` and `Lean.«Elab»`
        # are caught as qualified names; after `open Lean`, `Elab.`/`Meta.` name the same API
        "Elab",
        "Meta",
        "command_elab",
        "term_elab",
        "setEnv",
        "skipKernelTC",
    ),
}
# Coq vernacular that names a file or a plugin function by a string: `Require "path/file".`,
# `Require Import "file"`, `From "dir" Require`, Ltac2's `@ external "plugin" "function"`
_COQ_FILE_ARGUMENT = re.compile(
    r"(?<![\w.'])(?:(?:Require|From)(?:\s+(?:Import|Export))?\s*\"|Ltac2\s*@\s*external|@\s*external(?![\w']))"
)
_NATIVE = ("native_decide", "+native", "decide.native")
_NATIVE_OPTION = re.compile(r"(?<![\w.])native\s*:=\s*true\b")  # decide (config := {native := true})

AHEAD_FORBIDDEN: dict[str, tuple[str, ...]] = {
    "coq": (
        "Notation",
        "Infix",
        "Reserved",
        "Delimit",
        "Bind Scope",
        "Open Scope",
        "Close Scope",
        "Local Open",
        "Arguments",
        "Coercion",
        "Canonical",
        "Instance",
        "Existing",
        "Declare",
        "Module",
        "Include",  # `Include IsEq.` declares the module type's `Axiom`s as parameters
        "Section",
    ),
    "lean": (
        "instance",
        "attribute",
        "universe",
        "set_option",
        "open",
        "export",
        "local",
        "scoped",
        "class",
    ),
}

_QUALIFIABLE = frozenset(
    {
        "sorryAx",
        "ofReduceBool",
        "ofReduceNat",
        "trustCompiler",
        "addDecl",
        "modifyEnv",
        "setEnv",
        "skipKernelTC",
        "Lean.Elab",
        "Lean.Meta",
        "Lean.Environment",
    }
)
"""Forbidden however they are qualified (``Lean.ofReduceBool``, ``_root_.sorryAx``,
``_root_.Lean.Elab``)."""

_PREFIXES = frozenset({"addDecl"})
"""Forbidden as the start of a longer name too (``addDeclWithoutChecking``)."""

_LEAN_ATTRIBUTE = re.compile(r"@\[|(?<![\w.'])attribute\s*\[")
_LEAN_META_ATTRIBUTES = re.compile(
    r"(?<![\w.'])(?:tactic|init|\w*_elab|\w*_parser|builtin_\w+|\w*linter|positivity|norm_num|"
    r"code_action_provider|widget\w*|command_code_action|incremental)(?![\w'])"
)
"""Attributes that register code Lean runs while elaborating later commands (elaborators, tactics,
parsers, linters, tactic extensions such as ``@[positivity]``/``@[norm_num]`` or an Aesop
``tactic`` rule): code after the proof could then take over the checker's own re-check and
``#print axioms`` commands, or add a declaration the kernel never checked."""


def token_re(word: str) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(part) for part in word.split())
    before = r"(?<![\w'#@])" if word in _QUALIFIABLE else r"(?<![\w.'#@])"
    after = "" if word in _PREFIXES else r"(?![\w'])"  # `#eval!` is `#eval` too
    return re.compile(rf"{before}{body}{after}")


def forbidden_in(code: str, language: Language, policy: ProofPolicy) -> str | None:
    """The first forbidden construct in ``code`` (comments and strings ignored), or None."""
    scan = blank_strings(strip_comments(code, language), language)
    words = _FORBIDDEN[language] + tuple(policy.extra_forbidden)
    if language == "lean" and not policy.allow_native_decide:
        words += _NATIVE
        if _NATIVE_OPTION.search(scan):
            return "forbidden `native := true` in the proof"
    if language == "lean":
        why = _lean_attributes(scan)
        if why:
            return why
    if language == "coq":
        hit = _COQ_FILE_ARGUMENT.search(scan)
        if hit:
            return f"forbidden `{' '.join(hit.group(0).split())}` in the proof (it names a file or plugin)"
    return check_tokens(scan, words, "in the proof")


def check_tokens(scan: str, words: tuple[str, ...], where: str) -> str | None:
    # Lean's `«x»` is the name `x` (`Lean.«Elab»` is `Lean.Elab`): read the names both ways
    views = (scan, scan.replace("«", "").replace("»", ""), scan.replace("«", " ").replace("»", " "))
    for word in words:
        pattern = token_re(word)
        if any(pattern.search(view) for view in views):
            return f"forbidden `{word}` {where}"
    return None


def _lean_attributes(scan: str) -> str | None:
    """The first attribute (``@[...]``, ``attribute [...]``) that registers meta code, or None."""
    for m in _LEAN_ATTRIBUTE.finditer(scan):
        depth, i = 1, m.end()
        while i < len(scan) and depth:
            depth += {"[": 1, "]": -1}.get(scan[i], 0)
            i += 1
        content = scan[m.end() : i].replace("«", " ").replace("»", " ")
        hit = _LEAN_META_ATTRIBUTES.search(content)
        if hit:
            return f"forbidden attribute `{hit.group(0)}` (it registers code that Lean runs)"
    return None
