"""Cleaning free text that package code wrote (reprs, messages, probe details) before the hub
stores or shows it: every string is length-capped, stripped of control characters, and anything
that matches the hub's own secrets (its database URL, that URL's password, the data folder) or
looks like a credential (hub tokens, ``hf_``/``sk-`` keys, ``password=...``) is replaced.

Pages escape what they show (Jinja autoescape); this is what keeps a review report from carrying
the server's secrets out even when a child process saw them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

__all__ = ["MAX_TEXT", "REDACTED", "Redactor", "hub_secrets"]

#: The most characters one string of a report keeps.
MAX_TEXT = 16000
REDACTED = "[redacted]"
#: Strings that look like credentials whoever they belong to.
_CREDENTIALS = re.compile(
    r"vh_[0-9a-f]{12}_[A-Za-z0-9_-]{20,}"
    r"|\bhf_[A-Za-z0-9]{20,}"
    r"|\bsk-[A-Za-z0-9_-]{20,}"
    r"|\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{20,}"
    r"|(?i:(?:password|passwd|secret|token|api[_-]?key)\s*[=:]\s*)[^\s'\",;&]+"
    r"|(?i:[a-z][a-z0-9+.-]*://[^\s/:@'\"]*:)[^\s/@'\"]+(?=@)"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def hub_secrets(db_url: str, data: str = "") -> list[str]:
    """What of the hub's own settings must never appear in a report: the database URL, its
    password (raw and percent-decoded) and the data folder's path."""
    found = [db_url, data]
    if db_url:
        try:
            password = urlsplit(db_url).password
        except ValueError:
            password = None
        if password:
            found += [password, unquote(password)]
    return [s for s in found if len(s) >= 4]


@dataclass(frozen=True)
class Redactor:
    """Cleans strings and JSON values with one set of secrets."""

    secrets: tuple[str, ...] = ()

    @classmethod
    def of(cls, secrets: Iterable[str]) -> Redactor:
        # longest first, so that a URL is replaced whole before its password is looked for
        return cls(tuple(sorted({s for s in secrets if s}, key=len, reverse=True)))

    def text(self, value: str) -> str:
        for secret in self.secrets:
            value = value.replace(secret, REDACTED)
        value = _CREDENTIALS.sub(REDACTED, _CONTROL.sub("", value))
        if len(value) > MAX_TEXT:
            value = value[:MAX_TEXT] + f"... [{len(value) - MAX_TEXT} characters cut]"
        return value

    def value(self, value: Any) -> Any:
        """A JSON value with every string (keys included) cleaned."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value
