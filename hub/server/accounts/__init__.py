"""Who is asking: users, organisations and roles (:mod:`.users`), hashed tokens (:mod:`.tokens`),
credentials from HTTP requests (:mod:`.httpauth`, :mod:`.webauth`) and the failed-login limiter
(:mod:`.ratelimit`); in the browser: argon2 passwords (:mod:`.passwords`), sign-up invitations
(:mod:`.invitations`), server-side sessions (:mod:`.websessions`) and their cookies and CSRF
tokens (:mod:`.browser`), the decorator every page form goes through (:mod:`.forms`), and what a
person does to their own account, shared by the pages and the API (:mod:`.selfservice`,
:mod:`.api`).

Imports: :mod:`hub.server.core`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hub._lazy import surface

if TYPE_CHECKING:
    from hub.server.accounts.authcache import AuthCache
    from hub.server.accounts.browser import (
        apply_cookies,
        clear_session_cookie,
        csrf_field,
        session_secret,
        set_session_cookie,
        signed_in,
    )
    from hub.server.accounts.forms import Form, FormRefused, anonymous_form_endpoint, form_endpoint
    from hub.server.accounts.httpauth import principal, rate_limited
    from hub.server.accounts.invitations import DEFAULT_DAYS, create_invitation, list_invitations
    from hub.server.accounts.passwords import MIN_PASSWORD, check_password
    from hub.server.accounts.ratelimit import FailureLimiter
    from hub.server.accounts.selfservice import create_own_token, list_own_tokens, revoke_own_token, sign_up
    from hub.server.accounts.tokens import SCOPES
    from hub.server.accounts.users import (
        Principal,
        add_org,
        can_publish_as,
        get_owner,
        is_reviewer,
        visible_owner_ids,
    )
    from hub.server.accounts.webauth import guarded, guarded_write
    from hub.server.accounts.websessions import end_all_sessions, end_session, start_session

__all__ = [
    "AuthCache",
    "DEFAULT_DAYS",
    "FailureLimiter",
    "Form",
    "FormRefused",
    "MIN_PASSWORD",
    "Principal",
    "SCOPES",
    "add_org",
    "anonymous_form_endpoint",
    "apply_cookies",
    "can_publish_as",
    "check_password",
    "clear_session_cookie",
    "create_invitation",
    "create_own_token",
    "csrf_field",
    "end_all_sessions",
    "end_session",
    "form_endpoint",
    "get_owner",
    "guarded",
    "guarded_write",
    "is_reviewer",
    "list_invitations",
    "list_own_tokens",
    "principal",
    "rate_limited",
    "revoke_own_token",
    "session_secret",
    "set_session_cookie",
    "sign_up",
    "signed_in",
    "start_session",
    "visible_owner_ids",
]
__getattr__, __dir__ = surface(
    __name__,
    {
        "AuthCache": "hub.server.accounts.authcache",
        "DEFAULT_DAYS": "hub.server.accounts.invitations",
        "FailureLimiter": "hub.server.accounts.ratelimit",
        "Form": "hub.server.accounts.forms",
        "FormRefused": "hub.server.accounts.forms",
        "MIN_PASSWORD": "hub.server.accounts.passwords",
        "Principal": "hub.server.accounts.users",
        "SCOPES": "hub.server.accounts.tokens",
        "add_org": "hub.server.accounts.users",
        "anonymous_form_endpoint": "hub.server.accounts.forms",
        "apply_cookies": "hub.server.accounts.browser",
        "can_publish_as": "hub.server.accounts.users",
        "check_password": "hub.server.accounts.passwords",
        "clear_session_cookie": "hub.server.accounts.browser",
        "create_invitation": "hub.server.accounts.invitations",
        "create_own_token": "hub.server.accounts.selfservice",
        "csrf_field": "hub.server.accounts.browser",
        "end_all_sessions": "hub.server.accounts.websessions",
        "end_session": "hub.server.accounts.websessions",
        "form_endpoint": "hub.server.accounts.forms",
        "get_owner": "hub.server.accounts.users",
        "guarded": "hub.server.accounts.webauth",
        "guarded_write": "hub.server.accounts.webauth",
        "is_reviewer": "hub.server.accounts.users",
        "list_invitations": "hub.server.accounts.invitations",
        "list_own_tokens": "hub.server.accounts.selfservice",
        "principal": "hub.server.accounts.httpauth",
        "rate_limited": "hub.server.accounts.httpauth",
        "revoke_own_token": "hub.server.accounts.selfservice",
        "session_secret": "hub.server.accounts.browser",
        "set_session_cookie": "hub.server.accounts.browser",
        "sign_up": "hub.server.accounts.selfservice",
        "signed_in": "hub.server.accounts.browser",
        "start_session": "hub.server.accounts.websessions",
        "visible_owner_ids": "hub.server.accounts.users",
    },
)
