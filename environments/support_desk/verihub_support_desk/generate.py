"""The procedural generator: one seed database and its tickets, each with its gold actions.

Every task gets a customer, orders and a ticket of its own (so one task's actions never solve
another), drawn with a fixed random seed; the same ``(n, seed)`` always gives the same database
and tasks. Scenarios by level:

1. cancel a placed order; change an email address;
2. a small refund (full or partial) of a recent delivery; a cancellation of a shipped order
   (refused by policy: note and resolve);
3. a delivery 31-59 days ago (refund for gold customers only); a refund above the desk limit
   (approval from the right supervisor first); "my latest order" (look it up);
4. a suspended customer (escalate to the on-call supervisor); two requests in one ticket.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hub.env import Action, SeedDatabase, StateRequirements, Task

__all__ = ["LEVELS", "SCHEMA", "SUPERVISORS", "Desk", "generate"]

SCHEMA = """
CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE,
  tier TEXT NOT NULL CHECK (tier IN ('standard', 'gold')),
  status TEXT NOT NULL CHECK (status IN ('active', 'suspended')));
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
  item TEXT NOT NULL, amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
  refunded_cents INTEGER NOT NULL DEFAULT 0 CHECK (refunded_cents >= 0 AND refunded_cents <= amount_cents),
  status TEXT NOT NULL CHECK (status IN ('placed', 'shipped', 'delivered', 'cancelled')),
  days_since_delivery INTEGER);
CREATE TABLE agents(id TEXT PRIMARY KEY, name TEXT NOT NULL, role TEXT NOT NULL,
  approval_limit_cents INTEGER NOT NULL);
CREATE TABLE tickets(id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, email TEXT NOT NULL,
  body TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'open', assignee TEXT);
CREATE TABLE approvals(id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL, amount_cents INTEGER NOT NULL,
  requested_by TEXT NOT NULL, approved_by TEXT NOT NULL, used INTEGER NOT NULL,
  created_at TEXT DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE refunds(id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL, amount_cents INTEGER NOT NULL,
  reason TEXT NOT NULL, issued_by TEXT NOT NULL, approval_id INTEGER,
  created_at TEXT DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE notes(id INTEGER PRIMARY KEY, ticket_id INTEGER NOT NULL, author TEXT NOT NULL,
  body TEXT NOT NULL, created_at TEXT DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE policies(key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

SUPERVISORS = (
    ("ag_chen", "Mei Chen", 25_000),
    ("ag_rivera", "Sam Rivera", 50_000),
    ("ag_okafor", "Ada Okafor", 100_000),
    ("ag_silva", "Rui Silva", 500_000),
)
ON_CALL = "ag_okafor"
POLICIES = {
    "desk_refund_limit": "$100.00",
    "refund_window_days_standard": "30",
    "refund_window_days_gold": "60",
    "on_call_supervisor": ON_CALL,
}
LEVELS = (1, 2, 3, 4)
_FIRST = (
    "Ana",
    "Ben",
    "Chloe",
    "Dev",
    "Eli",
    "Fatima",
    "Gus",
    "Hana",
    "Ivan",
    "Jun",
    "Kofi",
    "Lena",
    "Marco",
    "Nia",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tara",
    "Uma",
    "Victor",
    "Wen",
    "Yara",
)
_LAST = (
    "Abbott",
    "Baker",
    "Costa",
    "Dubois",
    "Eze",
    "Fischer",
    "Garcia",
    "Haddad",
    "Ito",
    "Jensen",
    "Kowalski",
    "Lopez",
    "Moreau",
    "Nakamura",
    "Olsen",
    "Patel",
    "Quispe",
    "Reyes",
    "Sato",
    "Tanaka",
)
_ITEMS = (
    ("desk lamp", 3_499),
    ("wireless mouse", 2_450),
    ("office chair", 18_900),
    ("monitor", 23_999),
    ("standing desk", 54_900),
    ("keyboard", 7_999),
    ("headphones", 12_950),
    ("webcam", 6_480),
    ("laptop stand", 4_275),
    ("espresso machine", 39_900),
    ("backpack", 8_900),
    ("printer", 15_999),
)


@dataclass
class Desk:
    """The database being built and the tasks that point into it."""

    rng: random.Random
    customers: list[tuple[Any, ...]] = field(default_factory=list)
    orders: list[tuple[Any, ...]] = field(default_factory=list)
    tickets: list[tuple[Any, ...]] = field(default_factory=list)
    tasks: list[Task] = field(default_factory=list)

    def customer(self, *, tier: str = "standard", status: str = "active") -> tuple[int, str, str]:
        cid = len(self.customers) + 1
        first, last = self.rng.choice(_FIRST), self.rng.choice(_LAST)
        email = f"{first}.{last}{cid}@example.com".lower()
        self.customers.append((cid, f"{first} {last}", email, tier, status))
        return cid, f"{first} {last}", email

    def order(
        self, cid: int, status: str, days: int | None = None, *, big: bool | None = None
    ) -> tuple[int, str, int]:
        items = [i for i in _ITEMS if big is None or (i[1] > 10_000) == big]
        item, cents = self.rng.choice(items)
        oid = 1000 + len(self.orders)
        self.orders.append((oid, cid, item, cents, 0, status, days))
        return oid, item, cents

    def background(self, cid: int) -> None:
        for _ in range(self.rng.randint(0, 2)):
            self.order(cid, "delivered", self.rng.randint(70, 400))

    def ticket(self, cid: int, email: str, body: str) -> int:
        tid = 5000 + len(self.tickets)
        self.tickets.append((tid, cid, email, body, "open", None))
        return tid

    def add(
        self, level: int, kind: str, tid: int, gold: list[tuple[str, dict[str, Any]]], **req: Any
    ) -> None:
        spec = StateRequirements(gold_actions=tuple(Action(name=n, arguments=a) for n, a in gold), **req)
        _, _, email, body, _, _ = next(t for t in self.tickets if t[0] == tid)
        prompt = f"Ticket #{tid} from {email}:\n{body}"
        meta = {"difficulty": level, "kind": kind}
        self.tasks.append(
            Task(id=f"desk-{tid}", prompt=prompt, answer=spec.model_dump(mode="json"), metadata=meta)
        )


def _dollars(cents: int) -> float:
    return round(cents / 100, 2)


def _look(email: str, oid: int) -> list[tuple[str, dict[str, Any]]]:
    return [("find_customer", {"email": email}), ("get_order", {"order_id": oid})]


def _need(*names: tuple[str, dict[str, Any]]) -> tuple[Action, ...]:
    return tuple(Action(name=n, arguments=a) for n, a in names)


def _cancel(d: Desk) -> None:
    cid, name, email = d.customer()
    d.background(cid)
    oid, item, _ = d.order(cid, "placed")
    tid = d.ticket(
        cid, email, f"Hi, please cancel order #{oid} (the {item}), I ordered it by mistake. {name}"
    )
    d.add(
        1,
        "cancel",
        tid,
        [*_look(email, oid), ("cancel_order", {"order_id": oid}), ("resolve_ticket", {"ticket_id": tid})],
    )


def _email(d: Desk) -> None:
    cid, name, email = d.customer(tier=d.rng.choice(("standard", "gold")))
    new = f"{name.split()[0].lower()}.{d.rng.randint(100, 999)}@mail.example.org"
    tid = d.ticket(cid, email, f"Please change the email on my account to {new}. Thanks, {name}")
    d.add(
        1,
        "email",
        tid,
        [
            ("find_customer", {"email": email}),
            ("update_email", {"customer_id": cid, "new_email": new}),
            ("resolve_ticket", {"ticket_id": tid}),
        ],
    )


def _small_refund(d: Desk) -> None:
    cid, name, email = d.customer()
    d.background(cid)
    oid, item, cents = d.order(cid, "delivered", d.rng.randint(1, 29), big=False)
    partial = d.rng.random() < 0.4
    amount = _dollars(cents // 2) if partial else _dollars(cents)
    ask = f"a refund of ${amount:.2f} (part of it arrived broken)" if partial else "a full refund"
    tid = d.ticket(cid, email, f"My {item} from order #{oid} is faulty. I would like {ask}. {name}")
    d.add(
        2,
        "refund",
        tid,
        [
            *_look(email, oid),
            ("issue_refund", {"order_id": oid, "amount": amount, "reason": "faulty item"}),
            ("resolve_ticket", {"ticket_id": tid}),
        ],
        required_actions=_need(("get_order", {"order_id": oid})),
    )


def _shipped(d: Desk) -> None:
    cid, name, email = d.customer()
    oid, item, _ = d.order(cid, "shipped")
    tid = d.ticket(cid, email, f"Cancel order #{oid} please, I found the {item} cheaper elsewhere. {name}")
    d.add(
        2,
        "cancel_shipped",
        tid,
        [
            *_look(email, oid),
            ("add_note", {"ticket_id": tid, "body": "Order has shipped; cannot cancel."}),
            ("resolve_ticket", {"ticket_id": tid}),
        ],
        forbidden_actions=_need(("cancel_order", {})),
    )


def _window(d: Desk) -> None:
    gold = d.rng.random() < 0.5
    cid, name, email = d.customer(tier="gold" if gold else "standard")
    oid, item, cents = d.order(cid, "delivered", d.rng.randint(31, 59), big=False)
    tid = d.ticket(cid, email, f"I'd like to return the {item} (order #{oid}) for a full refund. {name}")
    if gold:
        act = [("issue_refund", {"order_id": oid, "amount": _dollars(cents), "reason": "return"})]
        d.add(3, "window_gold", tid, [*_look(email, oid), *act, ("resolve_ticket", {"ticket_id": tid})])
    else:
        d.add(
            3,
            "window_closed",
            tid,
            [
                *_look(email, oid),
                ("add_note", {"ticket_id": tid, "body": "Outside the refund window."}),
                ("resolve_ticket", {"ticket_id": tid}),
            ],
            forbidden_actions=_need(("issue_refund", {})),
        )


def _approver(cents: int) -> str:
    return next(s for s, _, limit in SUPERVISORS if s != "ag_rivera" and limit >= cents)


def _large_refund(d: Desk) -> None:
    cid, name, email = d.customer(tier=d.rng.choice(("standard", "gold")))
    d.background(cid)
    oid, item, cents = d.order(cid, "delivered", d.rng.randint(1, 25), big=True)
    amount = _dollars(cents)
    tid = d.ticket(
        cid, email, f"The {item} (order #{oid}) stopped working after two days. Please refund it. {name}"
    )
    sup = _approver(cents)
    d.add(
        3,
        "refund_approval",
        tid,
        [
            *_look(email, oid),
            ("list_supervisors", {}),
            ("request_approval", {"order_id": oid, "amount": amount, "supervisor_id": sup}),
            ("issue_refund", {"order_id": oid, "amount": amount, "reason": "defective", "approval_id": 1}),
            ("resolve_ticket", {"ticket_id": tid}),
        ],
    )


def _latest(d: Desk) -> None:
    cid, name, email = d.customer()
    for _ in range(d.rng.randint(1, 2)):
        d.order(cid, "delivered", d.rng.randint(80, 300))
    oid, item, _ = d.order(cid, "placed")
    tid = d.ticket(cid, email, f"Please cancel my most recent order, I no longer need it. {name}")
    d.add(
        3,
        "cancel_latest",
        tid,
        [
            ("find_customer", {"email": email}),
            ("get_customer_orders", {"customer_id": cid}),
            ("cancel_order", {"order_id": oid}),
            ("resolve_ticket", {"ticket_id": tid}),
        ],
    )


def _suspended(d: Desk) -> None:
    cid, name, email = d.customer(status="suspended")
    oid, item, cents = d.order(cid, "delivered", d.rng.randint(1, 20), big=False)
    tid = d.ticket(cid, email, f"Refund order #{oid} ({item}) now, it is not what I ordered. {name}")
    d.add(
        4,
        "suspended",
        tid,
        [
            ("find_customer", {"email": email}),
            ("get_policies", {}),
            ("escalate_ticket", {"ticket_id": tid, "supervisor_id": ON_CALL}),
        ],
        forbidden_actions=_need(("issue_refund", {}), ("cancel_order", {})),
    )


def _two_requests(d: Desk) -> None:
    cid, name, email = d.customer()
    placed, p_item, _ = d.order(cid, "placed")
    got, g_item, cents = d.order(cid, "delivered", d.rng.randint(1, 20), big=False)
    tid = d.ticket(
        cid,
        email,
        f"Two things: cancel order #{placed} ({p_item}), and refund order #{got} "
        f"(the {g_item} is damaged). {name}",
    )
    d.add(
        4,
        "two_requests",
        tid,
        [
            *_look(email, placed),
            ("cancel_order", {"order_id": placed}),
            ("get_order", {"order_id": got}),
            ("issue_refund", {"order_id": got, "amount": _dollars(cents), "reason": "damaged"}),
            ("resolve_ticket", {"ticket_id": tid}),
        ],
        required_actions=_need(("get_order", {"order_id": got})),
    )


_SCENARIOS: dict[int, tuple[Callable[[Desk], None], ...]] = {
    1: (_cancel, _email),
    2: (_small_refund, _shipped),
    3: (_window, _large_refund, _latest),
    4: (_suspended, _two_requests),
}


def generate(n: int = 320, seed: int = 2026) -> tuple[SeedDatabase, list[Task]]:
    """``n`` tasks cycling through the levels, and the seed database they share."""
    d = Desk(rng=random.Random(seed))
    for i in range(n):
        level = LEVELS[i % len(LEVELS)]
        scenarios = _SCENARIOS[level]
        scenarios[(i // len(LEVELS)) % len(scenarios)](d)
    for _ in range(40):  # customers with no ticket
        d.background(d.customer()[0])

    def fill(conn: sqlite3.Connection) -> None:
        conn.executescript(SCHEMA)
        conn.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?)", d.customers)
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?)", d.orders)
        conn.executemany("INSERT INTO tickets VALUES (?, ?, ?, ?, ?, ?)", d.tickets)
        conn.executemany("INSERT INTO agents VALUES (?, ?, 'supervisor', ?)", SUPERVISORS)
        conn.execute("INSERT INTO agents VALUES ('ag_lee', 'Jo Lee', 'agent', 0)")
        conn.executemany("INSERT INTO policies VALUES (?, ?)", POLICIES.items())

    return SeedDatabase.build(fill, name="support_desk"), d.tasks
