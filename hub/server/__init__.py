"""The hub server: publishing, the package index, reviews, results, bounties and pages.

Rooms, lowest first: :mod:`.core` (settings, database, records, blobs), :mod:`.accounts` (users,
tokens, request credentials), :mod:`.web` (templates and Markdown), then :mod:`.packages`
(publishing and the index), :mod:`.reviews` (the review queue), :mod:`.results` (pushed runs,
re-verification, cards and leaderboards) and :mod:`.bounties`. At the top: :mod:`.app` (the
Starlette application), :mod:`.worker` (reviews and re-verifications), :mod:`.serve` and
:mod:`.admin` (what ``verihub hub ...`` runs on a data folder). The client side of a hub lives
in :mod:`hub.client`.

Imports: any room of :mod:`hub` below it and :mod:`leaderboard`; only :mod:`hub.cli` imports it.
"""

__all__: list[str] = []
