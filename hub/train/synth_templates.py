"""The form a generator fills to propose a task: a JSON schema of the task's fields, the fields of
the environment's own tasks (the examples shown), and how fields become a prompt.

Where the environment has a solver (arith, textops) the generator only fills the parts of the
question that vary (an expression; an operation, a word and a letter) and the solver computes
the reference answer, so a small model has to write a well-formed question, not solve it.
Elsewhere the form is free: a ``{"prompt", "answer"}`` object whose answer is verified by
agreement (see :mod:`hub.train.synth`).

The schema is sent as ``response_format`` so servers that constrain decoding (llama.cpp, vLLM,
SGLang) return valid fields; every reply is still checked here against the same schema
(:func:`check_fields`), since a server may ignore the request. Model text is only ever matched
against the schema's patterns and enumerations, never evaluated.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hub.env import Environment, Task

__all__ = ["FREE", "RESPONSE_FORMATS", "TaskTemplate", "check_fields", "response_format", "template_for"]

MAX_FIELD_CHARS = 4000


@dataclass(frozen=True)
class TaskTemplate:
    """How a generator writes one task of an environment."""

    name: str
    form: str
    """The task's form as the generator is told it (``{field}`` where a field goes)."""
    schema: dict[str, Any]
    """JSON schema of the fields: an object of string properties (``enum``, ``pattern``, ``maxLength``)."""
    fields_of: Callable[[Task], dict[str, str] | None]
    """The fields of one of the environment's tasks (an example), or None if it has none."""
    render: Callable[[Mapping[str, str]], str | None]
    """The prompt the fields make, or None when they do not make one."""
    key: Callable[[Mapping[str, str]], str]
    """The text the duplicate check compares: what varies between the environment's tasks."""
    answers: bool = False
    """True when the generator also writes the reference answer (the ``answer`` field)."""


def check_fields(schema: Mapping[str, Any], value: Any) -> dict[str, str] | None:
    """``value`` as the schema's fields if it satisfies the schema (string properties, all
    required ones present, ``enum``, ``pattern`` as a full match, ``maxLength``), else None."""
    if not isinstance(value, dict):
        return None
    props: Mapping[str, Any] = schema.get("properties", {})
    if any(name not in value for name in schema.get("required", ())):
        return None
    out: dict[str, str] = {}
    for name, spec in props.items():
        if name not in value:
            continue
        field = value[name]
        if isinstance(field, int) and not isinstance(field, bool) and spec.get("type") == "string":
            field = str(field)  # a number where text is asked: the same answer
        if not isinstance(field, str):
            return None
        field = field.strip()
        if not field or len(field) > int(spec.get("maxLength", MAX_FIELD_CHARS)):
            return None
        if "enum" in spec and field not in spec["enum"]:
            return None
        if "pattern" in spec and re.fullmatch(str(spec["pattern"]).strip("^$"), field) is None:
            return None
        out[name] = field
    return out


RESPONSE_FORMATS = ("json_schema", "json_object")
"""The ways to send the schema, in the order tried: OpenAI's form (vLLM, SGLang, llama.cpp), then
``json_object`` with a ``schema`` (llama.cpp's own form; servers without it still return JSON)."""


def response_format(template: TaskTemplate, kind: str = "json_schema") -> dict[str, Any]:
    """The ``response_format`` of a request for one task, in one of :data:`RESPONSE_FORMATS`."""
    if kind == "json_object":
        return {"type": "json_object", "schema": template.schema}
    return {"type": "json_schema", "json_schema": {"name": "task", "strict": True, "schema": template.schema}}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _words(fields: Mapping[str, str]) -> str:
    return " ".join(fields.values())


FREE = TaskTemplate(
    name="free",
    form="a task in the style of the examples, and its reference answer",
    schema=_object(
        {
            "prompt": {"type": "string", "maxLength": MAX_FIELD_CHARS},
            "answer": {"type": "string", "maxLength": MAX_FIELD_CHARS},
        }
    ),
    fields_of=lambda t: (
        {"prompt": t.prompt, "answer": str(t.answer)}
        if isinstance(t.prompt, str) and t.answer is not None
        else None
    ),
    render=lambda f: f.get("prompt"),
    key=lambda f: f.get("prompt", ""),
    answers=True,
)
"""Any environment with text prompts: the generator writes the whole prompt and its answer."""

# --- arith ---------------------------------------------------------------------------------------

_NUM = "(0|[1-9][0-9]{0,3})"
_SMALL = "(0|[1-9][0-9]{0,2})"
_EXPRESSION = rf"({_NUM}( [-+*/] {_NUM}){{1,3}}|\({_SMALL} [-+] {_SMALL}\) \* [1-9][0-9]?)"
"""Integers joined by operators, or a parenthesised sum or difference times a number (the shapes
of arith's levels, a little wider)."""
_ARITH_FORM = "Compute {expr}. Reply with the final answer as: Answer: <integer>"
_ARITH_PROMPT = re.compile(r"Compute (.{1,200})\. Reply with the final answer as: Answer: <integer>")


def _arith() -> TaskTemplate:
    prompt = _ARITH_FORM

    def fields_of(task: Task) -> dict[str, str] | None:
        m = _ARITH_PROMPT.fullmatch(str(task.prompt).strip())
        return None if m is None else {"expression": m.group(1)}

    return TaskTemplate(
        name="arith",
        form=prompt.replace("{expr}", "{expression}"),
        schema=_object({"expression": {"type": "string", "pattern": f"^{_EXPRESSION}$", "maxLength": 60}}),
        fields_of=fields_of,
        render=lambda f: prompt.format(expr=f["expression"]),
        key=_words,
    )


# --- textops -------------------------------------------------------------------------------------


def _textops(module: Any) -> TaskTemplate | None:
    levels = getattr(module, "LEVELS", None)
    suffix = getattr(module, "_SUFFIX", None)
    if levels is None or not isinstance(suffix, str):
        return None
    ops = {op.name: op for _, operations in levels.values() for op in operations}
    patterns = {
        name: re.compile(
            re.escape(op.template).replace(r"\{w\}", "([A-Za-z]{1,64})").replace(r"\{c\}", "([A-Za-z])")
            + re.escape(suffix)
        )
        for name, op in ops.items()
    }

    def fields_of(task: Task) -> dict[str, str] | None:
        for name, pattern in patterns.items():
            m = pattern.fullmatch(str(task.prompt).strip())
            if m is not None:
                groups = m.groups()
                word, letter = (groups[1], groups[0]) if ops[name].uses_letter else (groups[0], "")
                return {"operation": name, "word": word, "letter": letter or word[0]}
        return None

    def render(f: Mapping[str, str]) -> str | None:
        op = ops.get(f["operation"])
        return None if op is None else op.template.format(w=f["word"], c=f["letter"]) + suffix

    def key(f: Mapping[str, str]) -> str:
        op = ops.get(f["operation"])
        letter = f" {f['letter']}" if op is not None and op.uses_letter else ""
        return f"{f['operation']} {f['word'].lower()}{letter}"

    forms = "; ".join(f"{name}: {op.template}" for name, op in ops.items())
    return TaskTemplate(
        name="textops",
        form=f"one of these questions about a word ({forms}), then '{suffix.strip()}'",
        schema=_object(
            {
                "operation": {"type": "string", "enum": sorted(ops)},
                "word": {"type": "string", "pattern": "^[a-z]{3,12}$", "maxLength": 12},
                "letter": {"type": "string", "pattern": "^[a-z]$", "maxLength": 1},
            }
        ),
        fields_of=fields_of,
        render=render,
        key=key,
    )


def template_for(env: Environment, form: str = "auto") -> TaskTemplate:
    """The environment's own form where verihub knows one (``auto``: arith, textops), else
    :data:`FREE`; ``form="free"`` asks for whole prompts and answers everywhere."""
    if form == "free" or env.id not in ("arith", "textops"):
        return FREE
    if env.id == "arith":
        return _arith()
    try:
        module = importlib.import_module(type(env).__module__)
    except ImportError:
        return FREE
    return _textops(module) or FREE
