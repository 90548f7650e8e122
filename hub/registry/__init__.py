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

from hub.registry.catalogue import Catalogue, CatalogueEntry, load_catalogue
from hub.registry.entrypoints import EnvInfo, installed, list_environments, load_environment, package_hash
from hub.registry.package import ENTRY_POINT_GROUP, hash_tree

__all__ = [
    "ENTRY_POINT_GROUP",
    "Catalogue",
    "CatalogueEntry",
    "EnvInfo",
    "hash_tree",
    "installed",
    "list_environments",
    "load_catalogue",
    "load_environment",
    "package_hash",
]
