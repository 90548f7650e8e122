"""Free text that leaves a sandbox: capped in length, with the host's secrets removed.

A package's code decides what its ``repr``, its exception messages and its stderr say, and a
check report shows them to others. :func:`host_secrets` collects what must never appear there:
the values of this process's environment variables whose names look secret, database and other
URLs' passwords, and the tokens of well-known services. :func:`redact` replaces them;
:func:`clean` caps the length too. The sandbox never receives these values (its environment is
an allow-list), so this is the second line: a report built here cannot repeat them even if a
path or a future change lets one through.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from urllib.parse import unquote, urlsplit

__all__ = ["MASK", "MAX_DETAIL", "MAX_REASON", "clean", "host_secrets", "looks_secret", "redact"]

MASK = "[redacted]"
MAX_REASON = 1000
"""Characters kept of a report's one-line reason."""
MAX_DETAIL = 500
"""Characters kept of each detail line (a repr, a message, a probe's example)."""

_SECRET_NAME = re.compile(
    r"(KEY|TOKEN|SECRET|PASSW(OR)?D|PASS|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|SIGNATURE|"
    r"DSN|DATABASE|_DB|DB_|CONN)",
    re.IGNORECASE,
)
_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)(?P<pw>[^@\s/]+)(?=@)")
_TOKEN_SHAPES = re.compile(
    r"\b(hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|"
    r"github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|vh[a-z]?_[A-Za-z0-9_-]{20,})"
)
_MIN_SECRET = 6  # shorter values ("1", "yes", a port) would blank ordinary words


def looks_secret(name: str) -> bool:
    """Whether an environment variable's name says its value is a secret."""
    return bool(_SECRET_NAME.search(name))


def _url_secrets(value: str) -> list[str]:
    out = []
    for match in _URL_PASSWORD.finditer(value):
        pw = match.group("pw")
        out += [pw, unquote(pw)]
    try:
        parts = urlsplit(value)
    except ValueError:
        return out
    if parts.password:
        out += [parts.password, value]
    return out


def host_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values that must not leave in a report: those of secret-looking variables of ``environ``
    (default: this process's), and every password found in a URL among its values."""
    env = os.environ if environ is None else environ
    found: set[str] = set()
    for name, value in env.items():
        if looks_secret(name):
            found.add(value)
        found.update(_url_secrets(value))
    # longest first: a value that contains another is replaced whole
    return sorted((s for s in found if len(s) >= _MIN_SECRET), key=len, reverse=True)


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every value of ``secrets``, every URL password and every well-known token
    shape replaced by :data:`MASK`."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, MASK)
    text = _URL_PASSWORD.sub(lambda m: m.group("head") + MASK, text)
    return _TOKEN_SHAPES.sub(MASK, text)


def clean(text: object, limit: int, secrets: Iterable[str] | None = None) -> str:
    """``str(text)`` redacted (against :func:`host_secrets` when ``secrets`` is None), with
    control characters but newline and tab escaped, and cut to ``limit`` characters."""
    raw = str(text)
    # redact before cutting (a cut secret would no longer match), but bound the work first
    raw = raw[: max(limit * 8, 1 << 20)]
    out = redact(raw, host_secrets() if secrets is None else secrets)
    out = "".join(c if c.isprintable() or c in "\n\t" else repr(c)[1:-1] for c in out)
    return out if len(out) <= limit else out[: limit - 1] + "…"
