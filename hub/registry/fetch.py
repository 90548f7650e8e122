"""verihub's own downloads over the network (catalogues, hub API calls, released wheels), guarded.

Every fetch goes through :func:`open_url`, which refuses:

- a URL that is not https, except plain http to loopback (``127.0.0.1``, ``localhost``,
  ``[::1]``, :func:`hub.registry.config.is_loopback`) or where the caller allows plain http
  (``--allow-insecure`` for catalogues);
- a redirect that leaves that rule: from https down to http (even to loopback), to plain http
  off loopback, or to any other scheme (``file:``, ``ftp:``), each with an error naming both URLs.

:func:`download` saves one file that way, checking a ``#sha256=HEX`` fragment when the URL has one.

Credentials written into a URL (``https://user:secret@host/...``) are sent as a Basic
``Authorization`` header; that header, like one the caller passes, is not repeated to a redirect
target, and credentials never appear in errors.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import IO, Any

from hub.env.errors import UsageError
from hub.registry.config import is_loopback

__all__ = ["InsecureURLError", "check_url", "download", "open_url", "redact"]


class InsecureURLError(UsageError):
    """A URL, or a redirect, that would fetch over plain http off loopback or another scheme."""


def redact(url: str) -> str:
    """``url`` without the credentials written into it."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"***@{host}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def check_url(url: str, *, what: str, allow_insecure: bool = False) -> None:
    """Raise :class:`InsecureURLError` unless ``url`` may be fetched (see the module docstring)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https":
        return
    if parts.scheme == "http" and (allow_insecure or is_loopback(parts.hostname)):
        return
    if parts.scheme == "http":
        raise InsecureURLError(
            f"{what} {redact(url)} is plain http, which anyone on the path can read and change; use https"
        )
    raise InsecureURLError(f"{what} {redact(url)} is not an http(s) URL; refused")


class _GuardedRedirects(urllib.request.HTTPRedirectHandler):
    def __init__(self, what: str, allow_insecure: bool) -> None:
        super().__init__()
        self.what = what
        self.allow_insecure = allow_insecure

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        old = urllib.parse.urlsplit(req.full_url).scheme
        new = urllib.parse.urlsplit(newurl).scheme
        where = f"{self.what} {redact(req.full_url)} redirects to {redact(newurl)}"
        if old == "https" and new != "https":
            raise InsecureURLError(f"{where}, away from https; refused")
        try:
            check_url(newurl, what=self.what, allow_insecure=self.allow_insecure)
        except InsecureURLError as exc:
            raise InsecureURLError(f"{where}; refused ({exc})") from None
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def open_url(
    url: str,
    *,
    what: str,
    timeout: float,
    allow_insecure: bool = False,
    method: str = "GET",
    headers: Mapping[str, str] | None = None,
    data: Any = None,
) -> Any:
    """``urlopen`` of ``url`` under the rules of the module docstring; the response (a context
    manager). Errors are urllib's (``HTTPError``, ``URLError``) or :class:`InsecureURLError`."""
    check_url(url, what=what, allow_insecure=allow_insecure)
    parts = urllib.parse.urlsplit(url)
    auth = None
    if parts.username is not None or parts.password is not None:
        user = urllib.parse.unquote(parts.username or "")
        secret = urllib.parse.unquote(parts.password or "")
        auth = "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()
        netloc = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
        if ":" in (parts.hostname or ""):
            netloc = f"[{parts.hostname}]" + (f":{parts.port}" if parts.port else "")
        url = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
    plain = {k: v for k, v in (headers or {}).items() if k.lower() != "authorization"}
    auth = next((v for k, v in (headers or {}).items() if k.lower() == "authorization"), auth)
    req = urllib.request.Request(url, data=data, headers=plain, method=method)  # noqa: S310
    if auth is not None:  # sent to this URL only, never repeated to where it redirects
        req.add_unredirected_header("Authorization", auth)
    opener = urllib.request.build_opener(_GuardedRedirects(what, allow_insecure))
    return opener.open(req, timeout=timeout)


def download(url: str, dest: Path, *, what: str, timeout: float, max_bytes: int) -> Path:
    """Save the file at ``url`` into the folder ``dest`` (named as the URL's last path part) under the
    rules of :func:`open_url`; refuse it when it exceeds ``max_bytes`` or differs from the URL's
    ``#sha256=`` fragment. Raises :class:`UsageError` (network failures included)."""
    base, _, fragment = url.partition("#")
    pinned = re.fullmatch(r"sha256=([0-9a-fA-F]{64})", fragment)
    name = urllib.parse.unquote(PurePosixPath(urllib.parse.urlsplit(base).path).name)
    if not re.fullmatch(r"[A-Za-z0-9_.+-]+", name):
        raise UsageError(f"{what} {redact(base)} does not end in a plain file name")
    digest = hashlib.sha256()
    size = 0
    target = dest / name
    try:
        with open_url(base, what=what, timeout=timeout) as resp, target.open("wb") as out:
            while chunk := resp.read(1 << 20):
                size += len(chunk)
                if size > max_bytes:
                    raise UsageError(f"{what} {redact(base)} is larger than {max_bytes:,} bytes; refused")
                digest.update(chunk)
                out.write(chunk)
    except (OSError, http.client.HTTPException) as exc:
        raise UsageError(f"cannot fetch {what} {redact(base)}: {exc}") from exc
    if pinned and digest.hexdigest() != pinned.group(1).lower():
        raise UsageError(f"{what} {redact(base)} does not match the sha256 in its URL; refused")
    return target
