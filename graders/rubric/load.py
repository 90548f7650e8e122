"""Reading rubric files (JSON or YAML) into a validated :class:`RubricSpec`.

Every problem is reported once, on one line, with the path of the bad field and what to write
instead, e.g. ``checks[2] (id 'tone').wieght: unknown field; did you mean 'weight'?``.
YAML is read with a safe loader that also rejects duplicate keys (which YAML would silently
overwrite).
"""

from __future__ import annotations

import difflib
import functools
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from graders.rubric.errors import RubricFormatError
from graders.rubric.spec import (
    CHECK_KINDS,
    ContainsCheck,
    FunctionCheck,
    GraderCheck,
    JudgeCheck,
    JudgeSettings,
    LengthCheck,
    RegexCheck,
    RubricSpec,
)

__all__ = ["load_rubric_spec", "parse_rubric_spec"]


def _construct_mapping(loader: Any, node: Any, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    mapping: dict[Any, Any] = loader.construct_mapping(node, deep=deep)
    return mapping


@functools.lru_cache(maxsize=1)
def _strict_loader() -> Any:
    """A ``yaml.SafeLoader`` subclass that refuses duplicate mapping keys."""
    loader: Any = type("_StrictSafeLoader", (yaml.SafeLoader,), {})
    loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    return loader


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _location(loc: tuple[int | str, ...], data: Any) -> str:
    """``('checks', 2, 'judge', 'choices')`` -> ``checks[2] (id 'tone').choices``."""
    parts: list[str] = []
    node: Any = data
    previous: int | str | None = None
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
            node = node[item] if isinstance(node, list) and 0 <= item < len(node) else None
            if isinstance(node, Mapping) and isinstance(node.get("id"), str):
                parts.append(f" (id {node['id']!r})")
        elif isinstance(previous, int) and item in CHECK_KINDS:
            pass  # the discriminator's tag: already implied by the check itself
        else:
            parts.append(f".{item}" if parts else str(item))
            node = node.get(item) if isinstance(node, Mapping) else None
        previous = item
    return "".join(parts) or "(top level)"


_MODELS: dict[str, type[BaseModel]] = {
    "regex": RegexCheck,
    "contains": ContainsCheck,
    "length": LengthCheck,
    "grader": GraderCheck,
    "function": FunctionCheck,
    "judge": JudgeCheck,
}
_KINDS = ", ".join(CHECK_KINDS)


def _owner(loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model that the last field of ``loc`` belongs to (for "did you mean" hints)."""
    if len(loc) == 1:
        return RubricSpec
    if len(loc) == 2 and loc[0] == "judge":
        return JudgeSettings
    if len(loc) == 4 and loc[0] == "checks" and isinstance(loc[2], str):
        return _MODELS.get(loc[2])
    return None


def _message(err: Mapping[str, Any]) -> str:
    """One line saying what is wrong and what to write instead (pydantic's wording otherwise)."""
    kind, loc, value = err["type"], tuple(err["loc"]), err.get("input")
    field = loc[-1] if loc else None
    if kind == "value_error":
        return str(err["msg"]).removeprefix("Value error, ")
    if kind == "string_pattern_mismatch" and field == "function":
        return f"{value!r} is not an import path; write it as 'package.module:function'"
    if kind == "string_pattern_mismatch" and field == "id":
        return f"{value!r} is not a valid id: use 1-64 letters, digits, _ . - starting with a letter or digit"
    if kind == "union_tag_invalid":
        return f"unknown kind {err.get('ctx', {}).get('tag')!r}; use one of: {_KINDS}"
    if kind == "union_tag_not_found":
        return f"a check needs a kind: one of {_KINDS}"
    if kind == "model_attributes_type" and len(loc) == 2 and loc[0] == "checks":
        return f"a check must be a mapping with an id and a kind, got {type(value).__name__}"
    if kind == "tuple_type" and loc == ("checks",):
        return f"must be a list of checks, got {type(value).__name__}"
    if kind == "extra_forbidden" and isinstance(field, str):
        owner = _owner(loc)
        close = difflib.get_close_matches(field, list(owner.model_fields), n=1) if owner else []
        return "unknown field" + (f"; did you mean {close[0]!r}?" if close else "")
    return str(err["msg"])


def parse_rubric_spec(data: Any, *, source: str = "<rubric>") -> RubricSpec:
    """Validate already-parsed rubric data (a mapping); raise :class:`RubricFormatError`."""
    if not isinstance(data, Mapping):
        raise RubricFormatError(source, [f"the top level must be a mapping, got {type(data).__name__}"])
    try:
        return RubricSpec.model_validate(dict(data))
    except ValidationError as exc:
        problems = [f"{_location(tuple(err['loc']), data)}: {_message(err)}" for err in exc.errors()]
        raise RubricFormatError(source, problems) from None


def load_rubric_spec(source: str | os.PathLike[str] | Mapping[str, Any]) -> RubricSpec:
    """Load a rubric from a ``.json``/``.yaml``/``.yml`` file, or validate a mapping."""
    if isinstance(source, Mapping):
        return parse_rubric_spec(source)
    path = Path(source)
    name = str(path)
    suffix = path.suffix.lower()
    if suffix not in (".json", ".yaml", ".yml"):
        raise RubricFormatError(name, [f"unknown file type {suffix!r}; use .json, .yaml or .yml"])
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RubricFormatError(name, [f"cannot read the file: {exc.strerror or exc}"]) from None
    if suffix == ".json":
        try:
            data = json.loads(text, object_pairs_hook=_reject_duplicates)
        except ValueError as exc:
            raise RubricFormatError(name, [f"invalid JSON: {exc}"]) from None
    else:
        try:
            data = yaml.load(text, Loader=_strict_loader())  # noqa: S506 - a SafeLoader subclass
        except yaml.YAMLError as exc:
            raise RubricFormatError(name, [f"invalid YAML: {exc}".replace("\n", " ")]) from None
    return parse_rubric_spec(data, source=name)
