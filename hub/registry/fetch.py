"""verihub's own downloads over the network (catalogues, hub API calls, released wheels), guarded.

Every fetch goes through :func:`open_url`, which refuses a URL that is not https, except plain
http to loopback (:func:`hub.registry.config.is_loopback`) or where the caller allows it
(``--allow-insecure`` for catalogues), and a redirect that leaves that rule (https down to http,
plain http off loopback, any other scheme), naming both URLs. :func:`download` saves one file that
way, checking a ``#sha256=HEX`` fragment when the URL has one.

Credentials written into a URL (``https://user:secret@host/...``) are sent as a Basic
``Authorization`` header; that header, like one the caller passes, is not repeated to a redirect
target, and credentials never appear in errors. Requests go through httpx (the one HTTP stack of
verihub's synchronous calls), imported when the first request is made.
"""

from __future__ import annotations

import base64
import hashlib
import re
import urllib.parse
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from hub.env import UsageError
from hub.registry.config import is_loopback

if TYPE_CHECKING:
    import httpx

__all__ = [
    "FetchError",
    "HTTPStatusError",
    "InsecureURLError",
    "Response",
    "check_url",
    "download",
    "open_url",
    "redact",
]


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


_REDIRECTS = (301, 302, 303, 307, 308)
_MAX_REDIRECTS = 10


class FetchError(OSError):
    """The request did not complete: the host could not be reached, it timed out, or the
    connection dropped. An :class:`OSError`, as the standard library's network errors are."""

    def __init__(self, reason: str, *, connect: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.connect = connect
        """True when no connection was made (nothing was sent)."""


class HTTPStatusError(FetchError):
    """The server answered with an error status (or a redirect that is not followed)."""

    def __init__(self, url: str, status: int, reason: str, body: bytes) -> None:
        super().__init__(f"HTTP Error {status}: {reason}")
        self.url = url
        self.status = status
        self.reason = reason
        self.body = body


class Response:
    """An open response (a context manager): ``status``, ``headers``, ``url`` and :meth:`read`."""

    def __init__(self, response: httpx.Response, client: httpx.Client) -> None:
        self._response = response
        self._client = client
        self._chunks = response.iter_bytes()
        self._buffer = b""
        self.status = response.status_code
        self.headers = response.headers
        self.url = str(response.url)

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` bytes of the body (all of what is left when ``n`` < 0); b"" at its end."""
        import httpx

        parts, have = [self._buffer], len(self._buffer)
        try:
            while n < 0 or have < n:
                chunk = next(self._chunks, None)
                if chunk is None:
                    break
                parts.append(chunk)
                have += len(chunk)
        except httpx.HTTPError as exc:
            raise FetchError(_reason(exc)) from exc
        data = b"".join(parts)
        if n < 0:
            self._buffer = b""
            return data
        self._buffer = data[n:]
        return data[:n]

    def close(self) -> None:
        try:
            self._response.close()
        finally:
            self._client.close()

    def __enter__(self) -> Response:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _reason(exc: Exception) -> str:
    """What went wrong, in one line: the OS error under httpx's, when there is one."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, OSError) and cause.strerror:
            return f"[Errno {cause.errno}] {cause.strerror}" if cause.errno else cause.strerror
        cause = cause.__cause__ or cause.__context__
    return str(exc) or type(exc).__name__


def _check_redirect(url: str, target: str, *, what: str, allow_insecure: bool) -> None:
    where = f"{what} {redact(url)} redirects to {redact(target)}"
    if urllib.parse.urlsplit(url).scheme == "https" and urllib.parse.urlsplit(target).scheme != "https":
        raise InsecureURLError(f"{where}, away from https; refused")
    try:
        check_url(target, what=what, allow_insecure=allow_insecure)
    except InsecureURLError as exc:
        raise InsecureURLError(f"{where}; refused ({exc})") from None


def _without_credentials(url: str) -> tuple[str, str | None]:
    """``url`` without the user and password written into it, and those as a Basic header."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    user = urllib.parse.unquote(parts.username or "")
    secret = urllib.parse.unquote(parts.password or "")
    auth = "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()
    host = parts.hostname or ""
    netloc = (f"[{host}]" if ":" in host else host) + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, "")), auth


def _body(data: Any) -> Any:
    """A request body for httpx: bytes as they are, a binary file read in chunks."""
    if data is None or isinstance(data, (bytes, bytearray)):
        return data

    def chunks() -> Iterator[bytes]:
        while chunk := data.read(1 << 16):
            yield chunk

    return chunks()


def open_url(
    url: str,
    *,
    what: str,
    timeout: float,
    allow_insecure: bool = False,
    method: str = "GET",
    headers: Mapping[str, str] | None = None,
    data: Any = None,
    transport: httpx.BaseTransport | None = None,
) -> Response:
    """Open ``url`` under the rules of the module docstring; the :class:`Response` (a context
    manager; read it within the ``with``). ``data`` is bytes or a binary file.

    Redirects are followed as browsers and the standard library do (GET and HEAD on 301, 302,
    303, 307 and 308; a POST on 301, 302 and 303 becomes a GET without its body), at most 10, each
    checked; another 3xx is an :class:`HTTPStatusError`. Errors: :class:`InsecureURLError`,
    :class:`HTTPStatusError` (an error status, with the body's first 64 KiB) and :class:`FetchError`
    (no answer), both :class:`OSError`. ``transport`` replaces the network (tests).
    """
    import httpx

    check_url(url, what=what, allow_insecure=allow_insecure)
    url, auth = _without_credentials(url)
    plain = {k: v for k, v in (headers or {}).items() if k.lower() != "authorization"}
    plain.setdefault("Accept-Encoding", "identity")  # uncompressed, so a size cap counts what arrives
    auth = next((v for k, v in (headers or {}).items() if k.lower() == "authorization"), auth)
    client = httpx.Client(timeout=timeout, transport=transport, follow_redirects=False)
    body = _body(data)
    try:
        for _ in range(_MAX_REDIRECTS + 1):
            first = {"Authorization": auth} if auth is not None else {}  # this URL only, never a redirect's
            request = client.build_request(method, url, headers={**plain, **first}, content=body)
            try:
                response = client.send(request, stream=True)
            except httpx.HTTPError as exc:
                connect = isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout))
                raise FetchError(_reason(exc), connect=connect) from exc
            status = response.status_code
            if status < 300:
                return Response(response, client)
            location = response.headers.get("Location")
            if method in ("GET", "HEAD"):
                follow = status in _REDIRECTS
            else:
                follow = method == "POST" and status in (301, 302, 303)
            if not follow or location is None:
                raise _status_error(url, response)
            response.close()
            target = urllib.parse.urljoin(url, location)
            _check_redirect(url, target, what=what, allow_insecure=allow_insecure)
            url, _ = _without_credentials(target)
            auth = None
            if method == "POST":
                method, body = "GET", None
                plain = {
                    k: v for k, v in plain.items() if k.lower() not in ("content-type", "content-length")
                }
        raise FetchError(f"{what} {redact(url)}: more than {_MAX_REDIRECTS} redirects; refused")
    except BaseException:
        client.close()
        raise


def _status_error(url: str, response: httpx.Response) -> HTTPStatusError:
    import httpx

    try:
        body = b""
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) >= 1 << 16:
                break
    except httpx.HTTPError:
        pass
    finally:
        response.close()
    return HTTPStatusError(url, response.status_code, response.reason_phrase, body[: 1 << 16])


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
    except OSError as exc:  # FetchError and HTTPStatusError included
        raise UsageError(f"cannot fetch {what} {redact(base)}: {exc}") from exc
    if pinned and digest.hexdigest() != pinned.group(1).lower():
        raise UsageError(f"{what} {redact(base)} does not match the sha256 in its URL; refused")
    return target
