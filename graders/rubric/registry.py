"""Graders that a rubric can name (``kind: grader``), and import paths (``kind: function``).

The built-in names (``exact``, ``qa``, ``ifeval``, ``math``) are resolved lazily by import path,
so naming ``math`` imports the math grader only when that rubric is built; register more with
:func:`register_grader`. A check's ``options`` are validated against the factory's annotated
keyword parameters when the rubric is loaded: a mapping for a parameter typed as an options
class (e.g. ``qa``'s ``equivalence: EquivalenceOptions``) becomes that class, and a bad option
fails on load. Import paths come from rubric files, trusted configuration written by
environment authors; never pass model text here.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any, NoReturn, TypeVar, cast

from pydantic import ConfigDict, ValidationError, create_model

from graders.protocol import Grader
from graders.rubric.errors import RubricError, UnknownGraderError

__all__ = [
    "GraderFactory",
    "import_object",
    "make_grader",
    "register_grader",
    "registered_graders",
    "validate_options",
]

T = TypeVar("T")

GraderFactory = Callable[..., Grader]
"""Builds a grader from a check's ``options`` (keyword arguments)."""

_BUILTIN: dict[str, str] = {
    "exact": "graders.exact:ExactGrader",
    "qa": "graders.qa.grader:QAGrader",
    "ifeval": "graders.ifeval.grader:IFEvalGrader",
    "math": "graders.rubric.registry:_math_grader",
}
_REGISTERED: dict[str, GraderFactory] = {}


def _math_grader(**options: Any) -> Grader:
    from graders.math.grader import MathGrader
    from graders.math.options import MathOptions

    return MathGrader(validate_options(MathOptions, options))


def register_grader(name: str, factory: GraderFactory, *, replace: bool = False) -> None:
    """Make ``factory`` available to rubrics as ``grader: name``."""
    if not name or not name.replace("_", "").replace("-", "").replace(".", "").isalnum():
        raise ValueError(f"grader name {name!r} must be letters, digits, _ - .")
    if not replace and (name in _REGISTERED or name in _BUILTIN):
        raise ValueError(f"a grader named {name!r} is already registered; pass replace=True to override")
    _REGISTERED[name] = factory


def registered_graders() -> tuple[str, ...]:
    """Names a rubric may use with ``kind: grader``."""
    return tuple(sorted({*_BUILTIN, *_REGISTERED}))


def import_object(path: str) -> Any:
    """The object at ``"package.module:name"`` (trusted rubric configuration only)."""
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise RubricError(f"{path!r} is not an import path; write it as 'package.module:function'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise RubricError(
            f"cannot import {module_name!r} for {path!r}: {exc}; is its package installed?"
        ) from exc
    try:
        return getattr(module, attr)
    except AttributeError:
        raise RubricError(f"module {module_name!r} has no attribute {attr!r} (from {path!r})") from None


_STRICT = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


def _raise_readable(exc: ValidationError, *, skip: int = 0) -> NoReturn:
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"][skip:]) or "options"
        unknown = err["type"] in ("extra_forbidden", "unexpected_keyword_argument")
        problems.append(f"{where}: {'unknown option' if unknown else err['msg']}")
    raise ValueError("; ".join(problems)) from None


def validate_options(cls: type[T], data: Mapping[str, Any]) -> T:
    """``cls`` (a dataclass or pydantic model) built from a mapping, unknown keys refused at
    every level (nested option classes included)."""
    model = create_model("Options", __config__=_STRICT, value=(cls, ...))
    try:
        return cast(T, getattr(model.model_validate({"value": dict(data)}), "value"))  # noqa: B009
    except ValidationError as exc:
        _raise_readable(exc, skip=1)


def _typed_options(factory: Any, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` validated against the factory's annotated keyword parameters, so a mapping
    becomes the option class its parameter is typed with. Raises ``ValueError`` naming the bad
    option; a factory whose signature cannot be read gets the options as they are."""
    target = factory.__init__ if inspect.isclass(factory) else factory
    try:
        params = list(inspect.signature(factory).parameters.values())
        hints = typing.get_type_hints(target)
    except Exception:  # unresolvable annotations or no signature: pass the options through
        return dict(options)
    fields: dict[str, Any] = {}
    for param in params:
        if param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY) and param.name in options:
            default = ... if param.default is param.empty else param.default
            fields[param.name] = (hints.get(param.name, Any), default)
    open_ended = any(p.kind is p.VAR_KEYWORD for p in params)
    config = ConfigDict(extra="allow" if open_ended else "forbid", arbitrary_types_allowed=True)
    model = create_model("Options", __config__=config, **fields)
    try:
        validated = model.model_validate(options)
    except ValidationError as exc:
        _raise_readable(exc)
    return {key: getattr(validated, key, value) for key, value in options.items()}


def make_grader(name: str, options: dict[str, Any]) -> Grader:
    """Build the grader registered as ``name`` with ``options``."""
    factory: Any = _REGISTERED.get(name)
    if factory is None:
        path = _BUILTIN.get(name)
        if path is None:
            close = difflib.get_close_matches(name, registered_graders(), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise UnknownGraderError(
                f"no grader is registered as {name!r}.{hint} Known: {', '.join(registered_graders())}; "
                "add one with graders.rubric.register_grader(name, factory)"
            )
        factory = import_object(path)
    try:
        grader = factory(**_typed_options(factory, options))
    except (TypeError, ValueError) as exc:
        detail = " ".join(str(exc).split())[:300]
        raise RubricError(f"cannot build grader {name!r} with options {options!r}: {detail}") from exc
    if not isinstance(grader, Grader):
        raise RubricError(f"grader {name!r} built a {type(grader).__name__}, which is not a Grader")
    return grader
