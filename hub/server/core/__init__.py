"""The hub's foundation: settings (:mod:`.config`), the database and its migrations (:mod:`.db`,
``migrations/``), the records (:mod:`.models`), content-addressed blobs (:mod:`.storage`), the page
cache (:mod:`.cache`), visibility queries (:mod:`.queries`), name rules (:mod:`.names`) and the safe
upload reader (:mod:`.archive`).

Imports: rooms of :mod:`hub` below the server only; every other server room builds on this one.
"""

__all__: list[str] = []
