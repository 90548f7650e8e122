"""Who is asking: users, organisations and roles (:mod:`.users`), hashed tokens (:mod:`.tokens`),
credentials from HTTP requests (:mod:`.httpauth`, :mod:`.webauth`) and the failed-login limiter
(:mod:`.ratelimit`).

Imports: :mod:`hub.server.core`.
"""

__all__: list[str] = []
