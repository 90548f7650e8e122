"""The client side of the hub: login, push, push results and install against a hub's HTTP API.

The hub URL and token live in the user config file (the one the catalogue reads,
:func:`hub.registry.config.config_path`) under ``[hub] url`` and ``token``; the file is
written with mode 0600. Requests go through :func:`hub.registry.fetch.open_url` (httpx): the
hub must be https (plain http on loopback only), and a redirect away from https or to another
scheme is refused, so a token never travels in clear.
"""

from __future__ import annotations

import json
import os
import tarfile
import tempfile
import urllib.parse
from pathlib import Path
from typing import Any

from hub.env import UsageError, VerihubError
from hub.registry import FetchError, HTTPStatusError, config_path, open_url, read_config

__all__ = [
    "HubError",
    "clear_login",
    "hub_request",
    "hub_settings",
    "pack_bundle",
    "push_results",
    "save_login",
]


class HubError(VerihubError):
    """The hub refused a request or could not be reached."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


def _read_config(path: Path) -> dict[str, Any]:
    return read_config(path) if path.is_file() else {}


def _write_config(path: Path, data: dict[str, Any]) -> None:
    import tomli_w

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".config-")
    with os.fdopen(fd, "wb") as fh:
        tomli_w.dump(data, fh)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def save_login(url: str, token: str, path: Path | None = None) -> Path:
    """Store the hub URL and token in the config file (mode 0600); returns the file."""
    cfg = path or config_path()
    data = _read_config(cfg)
    data.setdefault("hub", {})
    data["hub"]["url"] = url.rstrip("/")
    data["hub"]["token"] = token.strip()
    _write_config(cfg, data)
    return cfg


def clear_login(path: Path | None = None) -> bool:
    """Remove the stored token; True when there was one."""
    cfg = path or config_path()
    data = _read_config(cfg)
    had = "token" in data.get("hub", {})
    if had:
        del data["hub"]["token"]
        _write_config(cfg, data)
    return had


def hub_settings(url: str | None = None, token: str | None = None) -> tuple[str, str | None]:
    """(hub URL, token or None): arguments first, then the config file."""
    data = _read_config(config_path()).get("hub", {})
    hub = url or data.get("url")
    if not hub:
        raise UsageError("no hub given: pass --hub URL or run `verihub login --hub URL`")
    same_hub = url is None or url.rstrip("/") == str(data.get("url", "")).rstrip("/")
    return str(hub).rstrip("/"), token or (data.get("token") if same_hub else None)


def hub_request(
    hub: str,
    path: str,
    *,
    token: str | None = None,
    method: str = "GET",
    body: Path | None = None,
    query: dict[str, str] | None = None,
    json_body: dict[str, Any] | None = None,
    timeout: float = 600.0,
) -> Any:
    """One API call; returns the decoded JSON, raises HubError with the hub's message.

    ``body`` is a file sent as gzip (a push); ``json_body`` an object sent as JSON.
    """
    url = hub + path + ("?" + urllib.parse.urlencode(query) if query else "")
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None
    if body is not None:
        headers["Content-Type"] = "application/gzip"
        headers["Content-Length"] = str(body.stat().st_size)
        data = body.open("rb")
    payload = json.dumps(json_body).encode() if json_body is not None else None
    if payload is not None:
        headers["Content-Type"] = "application/json"
    try:
        with open_url(
            url, what="hub", timeout=timeout, method=method, headers=headers, data=data or payload
        ) as resp:
            return json.loads(resp.read() or b"null")
    except HTTPStatusError as exc:
        try:
            message = json.loads(exc.body).get("error", exc.reason)
        except (ValueError, AttributeError):
            message = exc.reason
        raise HubError(f"the hub answered {exc.status}: {message}", exc.status) from exc
    except FetchError as exc:
        if exc.connect:
            raise HubError(f"cannot reach the hub at {hub}: {exc.reason}; is it running?") from exc
        cause = type(exc.__cause__ or exc).__name__
        raise HubError(f"the connection to {hub} failed ({cause}); try again") from exc
    except OSError as exc:  # the request body could not be read
        raise HubError(f"the connection to {hub} failed ({type(exc).__name__}); try again") from exc
    finally:
        if data is not None:
            data.close()


def pack_bundle(bundle: Path, out: Path) -> Path:
    """A gzipped tar of a bundle folder: its files only, relative names, sorted."""
    with tarfile.open(out, "w:gz") as tf:
        for p in sorted(bundle.rglob("*")):
            if p.is_symlink():
                raise UsageError(f"{p} is a symlink; a bundle holds plain files only")
            if p.is_file():
                tf.add(p, arcname=p.relative_to(bundle).as_posix(), recursive=False)
    return out


def push_results(
    hub: str,
    run_dir: Path,
    *,
    token: str | None,
    env: str | None = None,
    public: bool = False,
    label: str | None = None,
    prices: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """Check the run in ``run_dir`` here, then upload its three files; returns the hub's answer
    (the recorded run, ``created`` False when the hub had it already). ``prices`` (USD per million
    prompt and completion tokens) give the run a cost where its rollouts recorded none."""
    from hub.client.runpack import check_run_dir, pack_run

    if not token:
        raise UsageError("pushing results needs a token: `verihub login --hub URL` first, or --token")
    check_run_dir(run_dir)
    query = {"public": "1" if public else "0"}
    if env:
        query["env"] = env
    if label:
        query["label"] = label
    if prices is not None:
        query["price_in"], query["price_out"] = f"{prices[0]:g}", f"{prices[1]:g}"
    with tempfile.TemporaryDirectory(prefix="verihub-results-") as tmp:
        archive = pack_run(run_dir, Path(tmp) / "run.tar.gz")
        answer: dict[str, Any] = hub_request(
            hub, "/api/v1/results", token=token, method="POST", body=archive, query=query
        )
    return answer
