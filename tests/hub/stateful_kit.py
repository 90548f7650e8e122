"""A small stateful environment for the tests: accounts with balances and a transfer log."""

from __future__ import annotations

import time
from typing import Any

from hub.env import Action, RolloutDatabase, SeedDatabase, StatefulToolEnv, StateRequirements, Task

SCHEMA = """
CREATE TABLE accounts(name TEXT PRIMARY KEY, balance INTEGER NOT NULL CHECK (balance >= 0));
CREATE TABLE log(id INTEGER PRIMARY KEY, name TEXT, delta INTEGER, at REAL);
INSERT INTO accounts VALUES ('alice', 100), ('bob', 50), ('carol', 0);
"""


def balance(db: RolloutDatabase, name: str) -> dict[str, Any]:
    """The balance of an account."""
    row = db.one("SELECT name, balance FROM accounts WHERE name = ?", (name,))
    if row is None:
        raise KeyError(f"no account {name!r}")
    return row


def deposit(db: RolloutDatabase, name: str, amount: int) -> str:
    """Add ``amount`` to an account."""
    if amount <= 0 or amount > 10_000:
        return "error: amount must be between 1 and 10000"
    changed = db.execute("UPDATE accounts SET balance = balance + ? WHERE name = ?", (amount, name))
    if not changed:
        raise KeyError(f"no account {name!r}")
    db.execute("INSERT INTO log(name, delta, at) VALUES (?, ?, ?)", (name, amount, time.time()))
    return "ok"


def set_balance(db: RolloutDatabase, name: str, value: int) -> str:
    """Set an account's balance (writes first, then fails on a missing account)."""
    db.execute("INSERT INTO log(name, delta, at) VALUES (?, ?, ?)", (name, value, time.time()))
    if not db.execute("UPDATE accounts SET balance = ? WHERE name = ?", (value, name)):
        raise KeyError(f"no account {name!r}")
    return "ok"


def boom(db: RolloutDatabase) -> str:
    """Always fails."""
    raise RuntimeError("the tool broke")


def task(tid: str, actions: list[tuple[str, dict[str, Any]]], **extra: Any) -> Task:
    spec = StateRequirements(gold_actions=tuple(Action(name=n, arguments=a) for n, a in actions), **extra)
    return Task(id=tid, prompt=f"do {tid}", answer=spec.model_dump(mode="json"))


TASKS = [
    task("pay-alice", [("deposit", {"name": "alice", "amount": 5})]),
    task("pay-bob", [("deposit", {"name": "bob", "amount": 7})]),
    task(
        "fix-carol",
        [("balance", {"name": "carol"}), ("set_balance", {"name": "carol", "value": 3})],
        required_actions=(Action(name="balance", arguments={"name": "carol"}),),
        answer="carol has 3",
    ),
]


def make_env(tasks: list[Task] | None = None, **kwargs: Any) -> StatefulToolEnv:
    return StatefulToolEnv(
        id="bank",
        tools=[balance, deposit, set_balance, boom],
        tasks=TASKS if tasks is None else tasks,
        seed=SeedDatabase.from_script(SCHEMA),
        volatile={"log": ["id", "at"]},
        **kwargs,
    )
