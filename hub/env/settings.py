"""Every ``VERIHUB_*`` environment variable, in one typed model (pydantic-settings).

:func:`settings` reads the process environment at call time (so a changed variable takes effect
without a restart of anything cached); :func:`markdown_table` renders the reference table in
``docs/configuration.md``, which a test keeps equal to this model. :mod:`graders` stays free of
:mod:`hub`, so it reads its own few variables itself; they are declared here all the same, so one
table lists everything a user can set. Variables the hub sets for its own children (the sandbox's) are
internal and listed in :data:`INTERNAL`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["INTERNAL", "PREFIX", "Settings", "markdown_table", "settings"]

PREFIX = "VERIHUB_"

#: Variables verihub sets for its own child processes; not for users.
INTERNAL = frozenset(
    {
        "VERIHUB_SANDBOX_PACKAGE",
        "VERIHUB_SANDBOX_READ",
        "VERIHUB_UNUSED_KEY",  # an API-key variable name the verifiers adapter names and nobody sets
    }
)


class Settings(BaseSettings):
    """verihub's settings from ``VERIHUB_*`` variables (field ``hub_db`` is ``VERIHUB_HUB_DB``)."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, frozen=True, extra="ignore")

    config: Path | None = Field(
        None,
        description="The user config file (default `~/.config/verihub/config.toml`): catalogues, hub login, "
        "`[eval]` defaults.",
    )
    event_loop: Literal["auto", "asyncio"] = Field(
        "auto", description="`asyncio` forces the standard event loop instead of uvloop."
    )
    local_verbose: bool = Field(False, description="`1`: the embedded model's llama.cpp logs to stderr.")
    shared_data: Path | None = Field(
        None,
        description="Folder of the test and fidelity data (gsm8k/, math500/, ...); default `../shared/data`.",
    )
    board: Path | None = Field(
        None, description="Default `--board` folder of `verihub leaderboard` (default `./board`)."
    )
    hub_data: Path | None = Field(
        None,
        description="A hub's data folder, for `verihub hub ...` (operator commands) and its servers.",
    )
    hub_db: str = Field("", description="A hub's database URL (default: SQLite in the data folder).")
    hub_token: SecretStr | None = Field(
        None, description="Token for the hub commands (default: the one `verihub login` stored)."
    )
    hub_lease_s: float = Field(
        60.0,
        gt=0,
        description="Seconds a review or re-verification lease lasts before another worker may take it.",
    )
    hub_review_fast: bool = Field(False, description="`1`: reviews skip the slow checks (tests only).")
    hub_review_time_scale: float | None = Field(
        None,
        gt=0,
        le=10,
        description="Factor for a review's time limits (default: measured once when a worker starts, "
        "1 to 4 by this host's speed).",
    )
    hub_reverify_share: float = Field(
        0.1, ge=0, le=1, description="Share of a pushed run's rollouts the hub re-grades."
    )
    hub_upstream_index: str = Field(
        "https://pypi.org/simple/",
        description="The index a hub's `/simple/NAME/` redirects to for names it does not host "
        "(`none`: no redirect, 404).",
    )
    hub_open_registration: bool = Field(
        False, description="`1`: anyone may sign up on a hub's web pages (default: by invitation only)."
    )
    sandbox_cgroup: Path | None = Field(
        None,
        description="A delegated cgroup v2 folder the sandboxes' groups are made in (memory and pid limits "
        "the kernel enforces); default: the process's own group when it qualifies.",
    )
    kimina_url: str | None = Field(
        None, description="A Kimina-compatible Lean server (read by `graders.proof`)."
    )
    lean_repl: str | None = Field(None, description="Command line of a Lean REPL (read by `graders.proof`).")
    lean_project: Path | None = Field(
        None, description="Lean project folder the REPL or `lake env lean` runs in (read by `graders.proof`)."
    )
    proof_confine: bool = Field(
        True,
        description="`0`: proof checkers run without the bubblewrap confinement (read by `graders.proof`).",
    )
    aime_path: Path | None = Field(
        None, description="Local copy of the `aime` environment's data instead of the download."
    )
    amc_path: Path | None = Field(None, description="Local copy of the `amc` environment's data.")
    gsm8k_path: Path | None = Field(None, description="Local copy of the `gsm8k` environment's data.")
    ifeval_path: Path | None = Field(None, description="Local copy of the `ifeval` environment's data.")
    math500_path: Path | None = Field(None, description="Local copy of the `math500` environment's data.")
    nq_open_path: Path | None = Field(None, description="Local copy of the `nq_open` environment's data.")


def settings() -> Settings:
    """The settings as the environment has them now (a bad value raises a one-line error)."""
    return Settings()  # type: ignore[call-arg]  # (fields come from the environment)


def markdown_table() -> str:
    """The reference table of every variable: name, default, meaning."""
    rows = ["| variable | default | what it sets |", "| --- | --- | --- |"]
    for name, field in Settings.model_fields.items():
        default = field.default
        shown = (
            "unset"
            if default is None or default == ""
            else f"`{str(default).lower() if isinstance(default, bool) else default}`"
        )
        rows.append(f"| `{PREFIX}{name.upper()}` | {shown} | {field.description} |")
    return "\n".join(rows)


if __name__ == "__main__":  # pragma: no cover - `python -m hub.env.settings` prints the table
    print(markdown_table())
