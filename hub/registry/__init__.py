"""Finding and installing environments.

Reading guide:

- :mod:`hub.registry.entrypoints`: installed environments (the ``verihub.environments`` entry-point
  group), :func:`load_environment`, :func:`list_environments`, content hashes of installed packages.
- :mod:`hub.registry.package`: the entry-point group name and the content hash (:func:`hash_tree`).
- :mod:`hub.registry.catalogue`: catalogues of installable environments (the shipped
  ``catalogue.json`` and configured ones), their schema and the user config file.
- :mod:`hub.registry.install`: resolving ``ID[@VERSION]`` and pip-installing it, hash-verified.
- :mod:`hub.registry.sources`: a catalogue entry's source as one wheel file (built in the sandbox,
  or a released wheel downloaded; never built on the host).
- :mod:`hub.registry.wheels`: verifying a wheel as data before pip sees it;
  :mod:`hub.registry.entry_points_txt`: the one strict reader of its ``entry_points.txt``.
- :mod:`hub.registry.fetch`: every download (https only, redirects guarded).
- :mod:`hub.registry.data`: loading an environment's dataset (Hugging Face id or a local copy).
- :mod:`hub.registry.math_datasets`: the shared base of dataset-backed math environments.

Imports: :mod:`hub.env` (and ``graders``); nothing here imports the run, review or server rooms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hub._lazy import surface

if TYPE_CHECKING:
    from hub.registry.catalogue import Catalogue, CatalogueEntry, PathSource, WheelSource, load_catalogue
    from hub.registry.config import config_path, read_config
    from hub.registry.entry_points_txt import EntryPointsError, parse_entry_points
    from hub.registry.entrypoints import EnvInfo, installed, list_environments, load_environment, package_hash
    from hub.registry.fetch import FetchError, HTTPStatusError, InsecureURLError, open_url
    from hub.registry.install import (
        InstallError,
        InstallResult,
        build_wheel,
        check_wheel,
        parse_spec,
        uninstall,
        unpack_wheel,
        wheel_package_hash,
    )
    from hub.registry.names import OWNER_RE, RESERVED_NAMES, edit_distance, normalize, parse_ref
    from hub.registry.package import ENTRY_POINT_GROUP, hash_tree
    from hub.registry.wheels import WheelCheck, WheelError, verify_wheel

__all__ = [
    "Catalogue",
    "CatalogueEntry",
    "ENTRY_POINT_GROUP",
    "EntryPointsError",
    "EnvInfo",
    "FetchError",
    "HTTPStatusError",
    "InsecureURLError",
    "InstallError",
    "InstallResult",
    "OWNER_RE",
    "PathSource",
    "RESERVED_NAMES",
    "WheelCheck",
    "WheelError",
    "WheelSource",
    "build_wheel",
    "check_wheel",
    "config_path",
    "edit_distance",
    "hash_tree",
    "installed",
    "list_environments",
    "load_catalogue",
    "load_environment",
    "normalize",
    "open_url",
    "package_hash",
    "parse_entry_points",
    "parse_ref",
    "parse_spec",
    "read_config",
    "uninstall",
    "unpack_wheel",
    "verify_wheel",
    "wheel_package_hash",
]

__getattr__, __dir__ = surface(
    __name__,
    {
        "Catalogue": "hub.registry.catalogue",
        "CatalogueEntry": "hub.registry.catalogue",
        "ENTRY_POINT_GROUP": "hub.registry.package",
        "EntryPointsError": "hub.registry.entry_points_txt",
        "EnvInfo": "hub.registry.entrypoints",
        "FetchError": "hub.registry.fetch",
        "HTTPStatusError": "hub.registry.fetch",
        "InsecureURLError": "hub.registry.fetch",
        "InstallError": "hub.registry.install",
        "InstallResult": "hub.registry.install",
        "OWNER_RE": "hub.registry.names",
        "PathSource": "hub.registry.catalogue",
        "RESERVED_NAMES": "hub.registry.names",
        "WheelCheck": "hub.registry.wheels",
        "WheelError": "hub.registry.wheels",
        "WheelSource": "hub.registry.catalogue",
        "build_wheel": "hub.registry.install",
        "check_wheel": "hub.registry.install",
        "config_path": "hub.registry.config",
        "edit_distance": "hub.registry.names",
        "hash_tree": "hub.registry.package",
        "installed": "hub.registry.entrypoints",
        "list_environments": "hub.registry.entrypoints",
        "load_catalogue": "hub.registry.catalogue",
        "load_environment": "hub.registry.entrypoints",
        "normalize": "hub.registry.names",
        "open_url": "hub.registry.fetch",
        "package_hash": "hub.registry.entrypoints",
        "parse_entry_points": "hub.registry.entry_points_txt",
        "parse_ref": "hub.registry.names",
        "parse_spec": "hub.registry.install",
        "read_config": "hub.registry.config",
        "uninstall": "hub.registry.install",
        "unpack_wheel": "hub.registry.install",
        "verify_wheel": "hub.registry.wheels",
        "wheel_package_hash": "hub.registry.install",
    },
)
