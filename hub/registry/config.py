"""The user config file (``$VERIHUB_CONFIG`` or ``~/.config/verihub/config.toml``), as the registry
reads it: extra catalogue locations (``[hub] catalogues``), the hub that ``verihub login`` set
(``[hub] url``, whose catalogue document is read too), and ``[hub.pins]`` (environment id -> the
catalogue that alone may list it). A location may pin a catalogue's bytes: ``URL#sha256=HEX``.
"""

from __future__ import annotations

import ipaddress
import os
import re
import sys
import urllib.parse
from pathlib import Path
from typing import Any

from hub.env import UsageError
from hub.env.settings import settings

__all__ = [
    "HUB_CATALOGUE_PATH",
    "config_path",
    "configured_catalogues",
    "configured_pins",
    "is_loopback",
    "read_config",
    "split_pin",
]

HUB_CATALOGUE_PATH = "/api/v1/catalogue.json"
"""Where a hub server serves its catalogue document (in the schema of the shipped catalogue)."""


def config_path() -> Path:
    """The user config file: ``$VERIHUB_CONFIG`` or ``~/.config/verihub/config.toml``."""
    env = settings().config
    if env is not None:
        return env.expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "verihub" / "config.toml"


def read_config(path: Path) -> dict[str, Any]:
    """The TOML document at ``path`` (a one-line :class:`UsageError` when it cannot be read)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # a base dependency on Python 3.10
        import tomli as tomllib
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path}: {exc}; fix or remove it") from exc
    return data


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` is a loopback address (or ``localhost``)."""
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def split_pin(location: str) -> tuple[str, str | None]:
    """``"URL#sha256=HEX"`` -> ``("URL", "HEX")``; a location without a pin -> ``(location, None)``."""
    base, sep, fragment = location.partition("#sha256=")
    if not sep:
        return location, None
    digest = fragment.strip().lower()
    if not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise UsageError(f"catalogue pin in {location!r} must be #sha256= and 64 hex digits")
    return base, digest


def configured_catalogues(path: Path | None = None) -> list[str]:
    """Extra catalogue locations from the user config file (none when it does not exist)."""
    cfg = path if path is not None else config_path()
    if not cfg.is_file():
        return []
    data = read_config(cfg)
    cats = data.get("hub", {}).get("catalogues", [])
    if not isinstance(cats, list) or not all(isinstance(c, str) for c in cats):
        raise UsageError(f"{cfg}: [hub] catalogues must be a list of paths or URLs")
    base = cfg.resolve().parent
    out: list[str] = []
    for c in cats:
        is_url = urllib.parse.urlparse(c).scheme in ("http", "https", "file")
        out.append(c if is_url or Path(c).expanduser().is_absolute() else str(base / c))
    hub_url = data.get("hub", {}).get("url")
    if isinstance(hub_url, str) and hub_url:  # set by `verihub login`: the hub's own catalogue
        out.append(hub_url.rstrip("/") + HUB_CATALOGUE_PATH)
    return out


def configured_pins(path: Path | None = None) -> dict[str, str]:
    """``[hub.pins]`` of the user config: environment id -> the catalogue location that owns it."""
    cfg = path if path is not None else config_path()
    if not cfg.is_file():
        return {}
    pins = read_config(cfg).get("hub", {}).get("pins", {})
    if not isinstance(pins, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in pins.items()
    ):
        raise UsageError(f'{cfg}: [hub.pins] must map environment ids to catalogue locations (id = "URL")')
    base = cfg.resolve().parent
    out: dict[str, str] = {}
    for env_id, loc in pins.items():
        where, _ = split_pin(loc)
        is_url = urllib.parse.urlparse(where).scheme in ("http", "https", "file")
        out[env_id] = where if is_url or Path(where).expanduser().is_absolute() else str(base / where)
    return out
