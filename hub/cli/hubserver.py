"""The hub server's commands: ``verihub hub ...`` (serve, worker, migrate, accounts, review state),
and the client commands ``verihub login``, ``logout`` and ``push``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer

from hub.cli.app import app
from hub.cli.consoles import make_console
from hub.cli.options import HubOpt, TokenOpt
from hub.env import UsageError

__all__ = ["hub_app", "login_cmd", "logout_cmd", "push_cmd"]

console = make_console()

hub_app = typer.Typer(
    name="hub",
    help="Run a verihub hub server and administer its data (accounts, tokens, review, yanks).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.add_typer(hub_app, name="hub")
user_app = typer.Typer(name="user", help="Hub users.", no_args_is_help=True)
org_app = typer.Typer(name="org", help="Hub organisations.", no_args_is_help=True)
token_app = typer.Typer(name="token", help="API tokens.", no_args_is_help=True)
invite_app = typer.Typer(name="invite", help="Sign-up invitations for the web pages.", no_args_is_help=True)
hub_app.add_typer(user_app, name="user")
hub_app.add_typer(invite_app, name="invite")
hub_app.add_typer(org_app, name="org")
hub_app.add_typer(token_app, name="token")

_DATA_HELP = (
    "The hub's data folder: artifacts, and the SQLite database unless --db is given "
    "[default: $VERIHUB_HUB_DATA; `hub serve` and `hub migrate` fall back to ./hub-data]."
)
_DB_HELP = "Database URL: sqlite:///PATH (default DATA/hub.db) or postgresql://USER@HOST/DB."


def _config(
    data: Path | None, db: str | None, *, lease_s: float = 60.0, fast: bool = False, share: float = 0.1
) -> object:
    from hub.server import HubConfig

    root = data or Path(os.environ.get("VERIHUB_HUB_DATA", "hub-data"))
    return HubConfig(
        data=root,
        db_url=db or os.environ.get("VERIHUB_HUB_DB", ""),
        lease_s=lease_s,
        review_fast=fast,
        reverify_share=share,
    )


def _admin_config(data: Path | None, db: str | None, *, create: bool = False) -> object:
    """The config of a hub named by ``--data`` (or VERIHUB_HUB_DATA), never a default folder. Only
    the commands that set a hub up (``create``: user and organisation add) may create its database;
    the others need a hub that exists, so none makes an empty hub by accident."""
    from hub.server import HubConfig

    if data is None and not os.environ.get("VERIHUB_HUB_DATA"):
        raise UsageError(
            "name the hub's data folder: --data DIR (or VERIHUB_HUB_DATA); for a hub you reach over "
            "HTTP use `verihub status`, `verihub yank` and `verihub visibility`"
        )
    cfg = _config(data, db)
    assert isinstance(cfg, HubConfig)
    if not create and not cfg.db_url and not (cfg.data / "hub.db").is_file():
        raise UsageError(
            f"there is no hub in {cfg.data} (no hub.db); start one with "
            f"`verihub hub serve --data {cfg.data}` or `verihub hub migrate --data {cfg.data}`"
        )
    return cfg


DataOpt = typer.Option(None, "--data", help=_DATA_HELP)
DbOpt = typer.Option(None, "--db", help=_DB_HELP)
ShareOpt = typer.Option(
    0.1,
    "--reverify-share",
    envvar="VERIHUB_HUB_REVERIFY_SHARE",
    min=0.0,
    max=1.0,
    help="Share of a pushed run's rollouts the worker regrades (at least 20, or all of a smaller run).",
)


@hub_app.command("serve")
def serve_cmd(
    data: Path = DataOpt,
    db: str = DbOpt,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", help="Port to listen on."),
    workers: int = typer.Option(1, "--workers", min=1, help="HTTP server processes."),
    review_worker: bool = typer.Option(
        None, "--review-worker/--no-review-worker", help="Run a review worker (default: on with SQLite)."
    ),
    lease_s: float = typer.Option(60.0, "--lease-s", min=1.0, help="Review job lease (seconds)."),
    review_fast: bool = typer.Option(False, "--review-fast", help="Smaller review checks (tests, demos)."),
    reverify_share: float = ShareOpt,
    forwarded_allow_ips: str = typer.Option(
        "",
        "--forwarded-allow-ips",
        help="Comma-separated addresses of the proxies whose X-Forwarded-For is believed (default: none; "
        "clients are the socket's peer).",
    ),
    upstream_index: str = typer.Option(
        "https://pypi.org/simple/",
        "--upstream-index",
        envvar="VERIHUB_HUB_UPSTREAM_INDEX",
        help="Index that /simple/NAME/ redirects to for names the hub does not host, so pip needs only "
        "the hub's URL; `none`: no redirect (404).",
    ),
    open_registration: bool = typer.Option(
        False,
        "--open-registration",
        envvar="VERIHUB_HUB_OPEN_REGISTRATION",
        help="Anyone may sign up on the web pages (default: by invitation, `verihub hub invite create`).",
    ),
) -> None:
    """Serve the hub: index at /simple/, API at /api/v1/, web pages at /."""
    import dataclasses

    from hub.server.serve import serve

    cfg = _config(data, db, lease_s=lease_s, fast=review_fast, share=reverify_share)
    cfg = dataclasses.replace(  # type: ignore[type-var]
        cfg, upstream_index=upstream_index, open_registration=open_registration
    )
    sys.stderr.write(f"verihub hub on http://{host}:{port}/ (index http://{host}:{port}/simple/)\n")
    serve(
        cfg,  # type: ignore[arg-type]
        host=host,
        port=port,
        workers=workers,
        review_worker=review_worker,
        forwarded_allow_ips=forwarded_allow_ips,
    )


@hub_app.command("worker")
def worker_cmd(
    data: Path = DataOpt,
    db: str = DbOpt,
    once: bool = typer.Option(False, "--once", help="Stop when the queue is empty."),
    lease_s: float = typer.Option(60.0, "--lease-s", min=1.0, help="Job lease (seconds)."),
    review_fast: bool = typer.Option(False, "--review-fast", help="Smaller review checks."),
    reverify_share: float = ShareOpt,
    parent_pid: int = typer.Option(None, "--parent-pid", hidden=True),
) -> None:
    """Take review jobs, then pushed runs to re-verify, from the hub's database queues and run them.
    Logs each job's outcome to stderr; SIGTERM stops it after the job in hand."""
    import logging

    from hub.server import work

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    cfg = _config(data, db, lease_s=lease_s, fast=review_fast, share=reverify_share)
    done = work(cfg, once=once, parent_pid=parent_pid)  # type: ignore[arg-type]
    if once:
        console.print(f"{done} job(s) done (reviews and run re-verifications)")


@hub_app.command("migrate")
def migrate_cmd(data: Path = DataOpt, db: str = DbOpt) -> None:
    """Create or upgrade the hub's database schema (Alembic migrations)."""
    from hub.server import HubConfig, current_revision, make_engine, open_hub

    cfg = _config(data, db)
    assert isinstance(cfg, HubConfig)
    cfg.data.mkdir(parents=True, exist_ok=True)
    engine = make_engine(cfg.database)
    try:
        before = current_revision(engine)
    finally:
        engine.dispose()
    with open_hub(cfg):
        pass
    engine = make_engine(cfg.database)
    try:
        after = current_revision(engine)
    finally:
        engine.dispose()
    if before is None:
        console.print(f"created the hub database schema (revision {after})")
    elif before != after:
        console.print(f"upgraded the hub database from revision {before} to {after}")
    else:
        console.print(f"the hub database is already at the newest revision ({after})")


@user_app.command("add")
def user_add_cmd(
    name: str = typer.Argument(..., help="User name (lowercase letters, digits, '-')."),
    admin: bool = typer.Option(False, "--admin", help="May create admin tokens."),
    reviewer: bool = typer.Option(
        False, "--reviewer", help="May create and review bounties, and label and correct rollouts."
    ),
    data: Path = DataOpt,
    db: str = DbOpt,
) -> None:
    """Create a user."""
    from hub.server import add_user, open_hub

    with open_hub(_admin_config(data, db, create=True)) as session:  # type: ignore[arg-type]
        add_user(session, name, admin=admin, reviewer=reviewer)
    scope = "review" if reviewer else "admin" if admin else "push"
    console.print(
        f"user {name} created; next: `verihub hub token create {name} --scope {scope}`, or "
        f"`verihub hub user password {name}` to sign in on the web pages"
    )


@user_app.command("role")
def user_role_cmd(
    name: str = typer.Argument(..., help="User name."),
    reviewer: bool = typer.Option(..., "--reviewer/--no-reviewer", help="Give or take the reviewer role."),
    data: Path = DataOpt,
    db: str = DbOpt,
) -> None:
    """Give a user the reviewer role (create and review bounties, with a review token) or take it."""
    from hub.server import open_hub, set_reviewer

    with open_hub(_admin_config(data, db)) as session:  # type: ignore[arg-type]
        set_reviewer(session, name, reviewer)
    console.print(f"{name} is {'now' if reviewer else 'no longer'} a reviewer")


@user_app.command("password")
def user_password_cmd(
    name: str = typer.Argument(..., help="User name."),
    data: Path = DataOpt,
    db: str = DbOpt,
) -> None:
    """Set a user's web password (asked twice on a terminal, else read from stdin's first line);
    stored only as an argon2 hash."""
    import getpass

    from hub.server import HubProblem, open_hub, set_password

    if sys.stdin.isatty():
        password = getpass.getpass(f"password for {name}: ")
        if getpass.getpass("again: ") != password:
            raise UsageError("the two passwords differ")
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    try:
        with open_hub(_admin_config(data, db)) as session:  # type: ignore[arg-type]
            set_password(session, name, password)
    except HubProblem as exc:
        raise UsageError(str(exc)) from exc
    console.print(f"password of {name} set (their browser sessions ended); sign in at /sign-in")


@invite_app.command("create")
def invite_create_cmd(
    reviewer: bool = typer.Option(False, "--reviewer", help="The new user gets the reviewer role."),
    expires_days: float = typer.Option(7.0, "--expires-days", help="Days until the code expires."),
    data: Path = DataOpt,
    db: str = DbOpt,
) -> None:
    """Create a single-use sign-up invitation; the code is printed once and stored only hashed."""
    from hub.server import HubProblem, create_invitation, open_hub

    try:
        with open_hub(_admin_config(data, db)) as session:  # type: ignore[arg-type]
            code = create_invitation(session, reviewer=reviewer, expires_days=expires_days)
    except HubProblem as exc:
        raise UsageError(str(exc)) from exc
    print(code)
    sys.stderr.write("this code is shown once; the invited person signs up at /sign-up with it\n")


@org_app.command("add")
def org_add_cmd(
    name: str = typer.Argument(..., help="Organisation name."),
    member: list[str] = typer.Option(None, "--member", help="A user who may publish as it (repeatable)."),
    data: Path = DataOpt,
    db: str = DbOpt,
) -> None:
    """Create an organisation, or add members to it."""
    from hub.server import add_org, open_hub

    with open_hub(_admin_config(data, db, create=True)) as session:  # type: ignore[arg-type]
        add_org(session, name, member or [])
    console.print(f"organisation {name}: members {', '.join(member or []) or 'unchanged'}")


@token_app.command("create")
def token_create_cmd(
    name: str = typer.Argument(..., help="User the token belongs to."),
    scope: str = typer.Option("read", "--scope", help="read, push, review or admin."),
    expires: float = typer.Option(None, "--expires", min=0.0, help="Days until it expires."),
    data: Path = DataOpt,
    db: str = DbOpt,
) -> None:
    """Create a token; it is printed once and stored only as a salted hash."""
    from hub.server import create_token, open_hub

    with open_hub(_admin_config(data, db)) as session:  # type: ignore[arg-type]
        text = create_token(session, name, scope, expires_days=expires)
    print(text)
    sys.stderr.write("this token is shown once; store it now (`verihub login --hub URL`)\n")


@token_app.command("revoke")
def token_revoke_cmd(
    token: str = typer.Argument(..., help="The token, or its id (the 12 hex digits after vh_)."),
    data: Path = DataOpt,
    db: str = DbOpt,
) -> None:
    """Revoke a token."""
    from hub.server import open_hub, revoke_token

    with open_hub(_admin_config(data, db)) as session:  # type: ignore[arg-type]
        token_id = revoke_token(session, token)
    console.print(f"token {token_id} revoked")


@hub_app.command("status")
def status_cmd(
    ref: str = typer.Argument(..., help="OWNER/ID or OWNER/ID@VERSION."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    data: Path = DataOpt,
    db: str = DbOpt,
) -> None:
    """Review state (queued, running, passed, failed) and the full report."""
    from hub.server import open_hub, status

    with open_hub(_admin_config(data, db)) as session:  # type: ignore[arg-type]
        rows = status(session, ref)
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        extra = "".join(f", {k} ({row[k]})" for k in ("yanked", "flagged") if row[k])
        console.print(f"{row['ref']}: {row['state']}{extra}", soft_wrap=True)
        report = row["report"] or {}
        for problem in report.get("problems", []):
            console.print(f"  problem: {problem}", soft_wrap=True)
        if report.get("check_text"):
            console.print(report["check_text"], soft_wrap=True)


@hub_app.command("yank")
def yank_cmd(
    ref: str = typer.Argument(..., help="OWNER/ID@VERSION."),
    reason: str = typer.Option(..., "--reason", help="Why it is withdrawn (shown to installers)."),
    data: Path = DataOpt,
    db: str = DbOpt,
) -> None:
    """Hide a version from resolution (PEP 592) without deleting it."""
    from hub.server import open_hub, yank

    with open_hub(_admin_config(data, db)) as session:  # type: ignore[arg-type]
        done = yank(session, ref, reason)
    console.print(f"{done} yanked: {reason}")


@hub_app.command("approve")
def approve_cmd(
    ref: str = typer.Argument(..., help="OWNER/ID."), data: Path = DataOpt, db: str = DbOpt
) -> None:
    """Clear an environment's look-alike flag after a person checked it."""
    from hub.server import approve, open_hub

    with open_hub(_admin_config(data, db)) as session:  # type: ignore[arg-type]
        done = approve(session, ref)
    console.print(f"{done} approved")


@hub_app.command("gc")
def gc_cmd(data: Path = DataOpt, db: str = DbOpt) -> None:
    """Delete stored files no version or pushed run refers to (left by interrupted pushes). Run it
    while the hub is stopped: a push in flight stores its files before it commits."""
    from hub.server import collect_garbage

    removed = collect_garbage(_admin_config(data, db))  # type: ignore[arg-type]
    console.print(f"removed {len(removed)} unreferenced file(s)")


@hub_app.command("backfill-rollouts")
def backfill_rollouts_cmd(data: Path = DataOpt, db: str = DbOpt) -> None:
    """Store the rollouts of runs pushed before the hub kept them row by row, so their run pages
    list them (safe while the hub runs; runs already done are skipped)."""
    from hub.server import backfill_rollouts

    done = backfill_rollouts(_admin_config(data, db))  # type: ignore[arg-type]
    for d in done:
        console.print(f"{d.public_id}: {d.error or f'{d.rollouts} rollouts stored'}")
    console.print(
        f"{sum(1 for d in done if not d.error)} run(s) backfilled, {sum(1 for d in done if d.error)} failed"
    )


@hub_app.command("publish-bundled")
def publish_bundled_cmd(
    owner: str = typer.Option("verihub", "--owner", help="Owner (organisation) to publish under."),
    only: list[str] = typer.Option(None, "--only", help="Only this environment id (repeatable)."),
    data: Path = DataOpt,
    db: str = DbOpt,
) -> None:
    """Build and publish the environments shipped with verihub (needs a verihub checkout)."""
    from hub.server import publish_bundled

    done = publish_bundled(_config(data, db), owner, only=only or (), progress=console.print)  # type: ignore[arg-type]
    console.print(f"{len(done)} environment(s) published under {owner}")


@app.command("login")
def login_cmd(
    hub: str = typer.Option(..., "--hub", help="Hub URL, e.g. http://127.0.0.1:8000."),
    token: str = typer.Option(None, "--token", help="The token (default: read from stdin)."),
) -> None:
    """Store a hub URL and token in your config file (mode 0600)."""
    from hub.client import hub_request, save_login

    text = (token or sys.stdin.readline()).strip()
    if not text:
        raise UsageError("no token given: pass --token or pipe it on stdin")
    who = hub_request(hub.rstrip("/"), "/api/v1/whoami", token=text)
    path = save_login(hub, text)
    console.print(f"logged in to {hub} as {who['name']} (scope {who['scope']}); saved in {path}")


@app.command("logout")
def logout_cmd() -> None:
    """Forget the stored hub token."""
    from hub.client import clear_login

    console.print("token removed" if clear_login() else "no token was stored")


@app.command("push")
def push_cmd(
    target: Path = typer.Argument(..., help="A package folder, a bundle folder or a bundle .tar.gz."),
    hub: str = HubOpt,
    owner: str = typer.Option(None, "--owner", help="Publish under this organisation (default: you)."),
    private: bool = typer.Option(False, "--private", help="Only you (and your organisation) see it."),
    wait: bool = typer.Option(False, "--wait", help="Wait for the hub's review and print its outcome."),
    token: str = TokenOpt,
) -> None:
    """Build the submission bundle as `verihub submit` does and publish it on a hub."""
    from hub.cli.author import describe_review
    from hub.client import hub_settings, wait_for_review
    from hub.client.push import push

    url, tok = hub_settings(hub, token)
    answer = push(
        target, hub=url, token=tok, owner=owner, private=private, on_step=lambda m: console.print(m + " ...")
    )
    ref = f"{answer['ref']}@{answer['version']}"
    console.print(f"{ref}: {answer['message']}", soft_wrap=True)
    if answer.get("flagged"):
        console.print(f"note: flagged for a person to look at: {answer['flagged']}", soft_wrap=True)
    console.print(f"page: {url}/{answer['ref']}", soft_wrap=True)
    if not wait:
        console.print(f"the review runs on the hub now; follow it with `verihub status {ref} --wait`")
        return
    status = wait_for_review(url, ref, token=tok, on_state=lambda s: console.print(f"review {s}"))
    for line in describe_review(status):
        console.print(line, soft_wrap=True)
    if status["state"] == "failed":
        raise typer.Exit(1)
