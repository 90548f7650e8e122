"""Which of verihub's extras provides a module that could not be imported.

A command that reaches for an optional dependency the install lacks (the server's ``starlette``,
the embedded model's ``xllamacpp``) ends with one line naming the extra to install, read from
verihub's own package metadata, instead of a traceback.
"""

from __future__ import annotations

from importlib import metadata

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

__all__ = ["extra_for_module", "missing_module_message"]

#: Import names that differ from their distribution's name (canonicalised).
_DISTRIBUTION_OF = {"markdown_it": "markdown-it-py", "yaml": "pyyaml", "psycopg_binary": "psycopg"}
#: Extras only the tests use; a user is never told to install them.
_NOT_FOR_USERS = frozenset({"dev"})


def extra_for_module(module: str, requirements: list[str] | None = None) -> str | None:
    """The extra of verihub that installs the top-level module ``module``, or None.

    ``requirements``: verihub's ``Requires-Dist`` lines (default: the installed metadata's).
    """
    top = module.split(".", 1)[0]
    wanted = canonicalize_name(_DISTRIBUTION_OF.get(top, top))
    if requirements is None:
        try:
            requirements = metadata.requires("verihub") or []
        except metadata.PackageNotFoundError:
            return None
    for line in requirements:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if canonicalize_name(req.name) != wanted or req.marker is None:
            continue
        for extra in _extras_of(str(req.marker)):
            if extra not in _NOT_FOR_USERS:
                return extra
    return None


def _extras_of(marker: str) -> list[str]:
    """The extra names an ``extra == "name"`` marker mentions."""
    out = []
    for part in marker.split("extra ==")[1:]:
        name = part.strip().split()[0].strip("\"'")
        if name:
            out.append(name)
    return out


def missing_module_message(module: str, requirements: list[str] | None = None) -> str:
    """One line for a command that needs ``module``: which extra to install, or which package."""
    extra = extra_for_module(module, requirements)
    if extra is not None:
        return f"this command needs {module}, from verihub's {extra!r} extra: pip install 'verihub[{extra}]'"
    return f"this command needs the Python module {module!r}, which is not installed: pip install it"
