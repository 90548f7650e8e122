"""Why the hub refuses a request, in the service layer's own words (no HTTP here).

Every refusal the service layer raises is a :class:`HubProblem` whose :class:`Problem` says what
kind of refusal it is; the web layer maps kinds to HTTP answers in one place
(:mod:`hub.server.web.errors`). The tree::

    HubProblem
    ├── ArchiveError     (hub.server.core.archive: an upload that cannot be unpacked safely)
    ├── PublishError     (hub.server.packages.publish)
    ├── ResultError      (hub.server.results.runs)
    ├── BountyError      (hub.server.bounties.inputs)
    ├── AuthFailed       (hub.server.accounts.httpauth: credentials sent and not valid)
    └── RateLimited      (hub.server.accounts.httpauth: too many failures from one client)
"""

from __future__ import annotations

import enum

__all__ = ["HubProblem", "Problem"]


class Problem(enum.Enum):
    """The kinds of refusal."""

    INVALID = "invalid"  #: the request is malformed or its content is refused
    UNPROCESSABLE = "unprocessable"  #: well-formed, but what it carries does not verify
    UNAUTHENTICATED = "unauthenticated"  #: no credentials, or credentials that are not valid
    FORBIDDEN = "forbidden"  #: the requester may not do this
    NOT_FOUND = "not_found"  #: nothing of that name the requester may see
    CONFLICT = "conflict"  #: the hub's state does not allow it (taken, already done, changed)
    TOO_LARGE = "too_large"  #: over a size cap
    RATE_LIMITED = "rate_limited"  #: too many failures; wait


class HubProblem(ValueError):
    """A refusal: the message says what is wrong and what to do next; ``problem`` its kind."""

    def __init__(self, message: str, problem: Problem = Problem.INVALID) -> None:
        super().__init__(message)
        self.problem = problem
