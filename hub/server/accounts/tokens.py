"""API tokens: ``vh_<id>_<secret>``, stored as a salted scrypt hash, compared in constant time.

The id (12 hex digits) is stored in clear to find the row; the secret (32 bytes, url-safe
base64) only as ``scrypt(secret, salt)``. Verifying costs one scrypt (~50 ms); a process keeps
the sha256 of tokens it has verified so that pip's one request per file does not pay it again
(revocation and expiry are still read from the database on every request).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

__all__ = ["SCOPES", "NewToken", "hash_secret", "new_token", "parse_token", "scope_allows", "verify_secret"]

#: Scopes, weakest first; each allows what the ones before it allow.
SCOPES = ("read", "push", "review", "admin")
_TOKEN = re.compile(r"^vh_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")
_N, _R, _P = 2**14, 8, 1


@dataclass(frozen=True)
class NewToken:
    """A freshly made token: ``text`` is shown once; the rest is stored."""

    id: str
    text: str
    salt: str
    hash: str


def hash_secret(secret: str, salt: str) -> str:
    return hashlib.scrypt(secret.encode(), salt=bytes.fromhex(salt), n=_N, r=_R, p=_P, dklen=32).hex()


def new_token() -> NewToken:
    token_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_hex(16)
    return NewToken(id=token_id, text=f"vh_{token_id}_{secret}", salt=salt, hash=hash_secret(secret, salt))


def parse_token(text: str) -> tuple[str, str] | None:
    """(id, secret) of a well-formed token, else None."""
    m = _TOKEN.match(text.strip())
    return (m.group(1), m.group(2)) if m else None


def verify_secret(secret: str, salt: str, stored: str) -> bool:
    return hmac.compare_digest(hash_secret(secret, salt), stored)


def scope_allows(have: str, need: str) -> bool:
    """Whether a token of scope ``have`` may do what needs ``need``."""
    return have in SCOPES and SCOPES.index(have) >= SCOPES.index(need)
