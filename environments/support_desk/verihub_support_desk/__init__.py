"""support_desk: a customer-support workflow on a per-rollout SQLite database (see README.md).

The agent handles one ticket with twelve tools (:mod:`verihub_support_desk.tools`); each
rollout works on its own copy of the desk's database, and the grade compares the state it
leaves with the gold actions' state (:class:`hub.env.StatefulToolEnv`).
"""

from __future__ import annotations

from collections.abc import Sequence

from hub.env import StatefulToolEnv, Task
from hub.env.errors import EnvironmentDefinitionError
from verihub_support_desk.generate import LEVELS, generate
from verihub_support_desk.tools import ACTING_AGENT, TOOLS

__all__ = ["SYSTEM_PROMPT", "VOLATILE", "load_environment"]

SYSTEM_PROMPT = f"""You are {ACTING_AGENT}, a support agent at an online shop.
Handle the ticket below with the tools. Policies:
1. Find the customer by the ticket's email address; act only on that customer's orders.
2. Only orders with status 'placed' can be cancelled. If a customer asks to cancel an order that has
   shipped or been delivered, do not cancel it: add a note to the ticket saying why, and resolve it.
3. Refunds are for delivered orders only, within the refund window after delivery: 30 days for
   standard customers, 60 days for gold customers. Outside the window: no refund; add a note and
   resolve the ticket.
4. A refund above $100.00 needs a supervisor's approval first: ask the supervisor with the lowest
   approval limit that covers the amount (never yourself), then issue the refund with that approval_id.
5. Suspended customers get no refunds or cancellations: escalate the ticket to the on-call supervisor.
6. Refund what the customer asks for (the full order amount unless they name an amount).
7. Every ticket ends resolved or escalated. When you are done, reply to the customer in one or two
   sentences without calling a tool."""

VOLATILE = {
    "approvals": ("created_at",),
    "refunds": ("id", "reason", "created_at"),
    "notes": ("id", "body", "created_at"),
}
TEST_EVERY = 5
"""Every fifth task is in ``test``, the others in ``train``."""


def _by_level(tasks: Sequence[Task], level: int | None) -> list[Task]:
    return [t for t in tasks if level is None or t.metadata["difficulty"] == level]


def load_environment(level: int | None = None, n: int = 320) -> StatefulToolEnv:
    """The desk with ``n`` generated tickets (``level`` 1-4 keeps one difficulty)."""
    if level is not None and level not in LEVELS:
        raise EnvironmentDefinitionError(f"level must be one of {LEVELS}, got {level}")
    if not 8 <= n <= 2000:
        raise EnvironmentDefinitionError(f"n must be between 8 and 2000, got {n}")
    seed, tasks = generate(n)
    splits = {
        "train": _by_level([t for i, t in enumerate(tasks) if i % TEST_EVERY], level),
        "test": _by_level([t for i, t in enumerate(tasks) if not i % TEST_EVERY], level),
    }
    return StatefulToolEnv(
        id="support_desk",
        version="0.1.0",
        tools=TOOLS,
        tasks=splits,
        seed=seed,
        volatile=VOLATILE,
        system_prompt=SYSTEM_PROMPT,
        max_turns=16,
    )
