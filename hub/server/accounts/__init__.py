"""Who is asking: users, organisations and roles (:mod:`.users`), hashed tokens (:mod:`.tokens`),
credentials from HTTP requests (:mod:`.httpauth`, :mod:`.webauth`) and the failed-login limiter
(:mod:`.ratelimit`); in the browser: argon2 passwords (:mod:`.passwords`), sign-up invitations
(:mod:`.invitations`), server-side sessions (:mod:`.websessions`) and their cookies and CSRF
tokens (:mod:`.browser`), the decorator every page form goes through (:mod:`.forms`), and what a
person does to their own account, shared by the pages and the API (:mod:`.selfservice`,
:mod:`.api`).

Imports: :mod:`hub.server.core`.
"""

__all__: list[str] = []
