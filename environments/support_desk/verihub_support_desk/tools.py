"""The support desk's tools: the application's rules live here, SQL only with bound parameters.

Enforced by the tools (a broken rule is an error for the model and changes nothing): only placed
orders can be cancelled; only delivered orders are refunded, never beyond what is left to
refund, never for a suspended customer; a refund above the desk limit needs an unused approval
for that order covering the amount; an approval is given only by a supervisor other than the
acting agent, within the supervisor's limit. Left to the agent (the policies in the system
prompt, checked by the grader on the final state): the refund window by tier, which supervisor
to ask, what to do with a shipped order or a suspended customer.
"""

from __future__ import annotations

import re
from typing import Any

from hub.env import RolloutDatabase

__all__ = [
    "ACTING_AGENT",
    "DESK_LIMIT_CENTS",
    "TOOLS",
    "add_note",
    "cancel_order",
    "escalate_ticket",
    "find_customer",
    "get_customer_orders",
    "get_order",
    "get_policies",
    "issue_refund",
    "list_supervisors",
    "request_approval",
    "resolve_ticket",
    "update_email",
]

ACTING_AGENT = "ag_rivera"
DESK_LIMIT_CENTS = 10_000
_EMAIL = re.compile(r"^[a-z0-9._+-]{1,64}@[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63}){1,4}$")
_MAX_TEXT = 500


class DeskError(Exception):
    """A request the application refuses."""


def _cents(amount: float) -> int:
    if not 0 < amount <= 100_000:
        raise DeskError("amount must be between 0.01 and 100000.00 dollars")
    return round(amount * 100)


def _dollars(cents: int) -> str:
    return f"${cents / 100:.2f}"


def _order(db: RolloutDatabase, order_id: int) -> dict[str, Any]:
    row = db.one("SELECT * FROM orders WHERE id = ?", (order_id,))
    if row is None:
        raise DeskError(f"no order {order_id}")
    return row


def _ticket(db: RolloutDatabase, ticket_id: int) -> dict[str, Any]:
    row = db.one("SELECT * FROM tickets WHERE id = ?", (ticket_id,))
    if row is None:
        raise DeskError(f"no ticket {ticket_id}")
    if row["status"] != "open":
        raise DeskError(f"ticket {ticket_id} is already {row['status']}")
    return row


def _text(value: str, what: str) -> str:
    value = value.strip()
    if not value or len(value) > _MAX_TEXT:
        raise DeskError(f"{what} must be 1 to {_MAX_TEXT} characters")
    return value


def _public_order(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "order_id": row["id"],
        "customer_id": row["customer_id"],
        "item": row["item"],
        "amount": _dollars(row["amount_cents"]),
        "refunded": _dollars(row["refunded_cents"]),
        "status": row["status"],
        "days_since_delivery": row["days_since_delivery"],
    }


def find_customer(db: RolloutDatabase, email: str) -> dict[str, Any]:
    """Look up a customer by email address."""
    row = db.one(
        "SELECT id, name, email, tier, status FROM customers WHERE email = ?", (email.strip().lower(),)
    )
    if row is None:
        raise DeskError(f"no customer with email {email[:80]!r}")
    return {"customer_id": row["id"], **{k: row[k] for k in ("name", "email", "tier", "status")}}


def get_customer_orders(db: RolloutDatabase, customer_id: int) -> list[dict[str, Any]]:
    """List a customer's orders, newest first."""
    rows = db.query("SELECT * FROM orders WHERE customer_id = ? ORDER BY id DESC", (customer_id,))
    return [_public_order(r) for r in rows]


def get_order(db: RolloutDatabase, order_id: int) -> dict[str, Any]:
    """Show one order: item, amount, amount refunded so far, status, days since delivery."""
    return _public_order(_order(db, order_id))


def get_policies(db: RolloutDatabase) -> dict[str, str]:
    """The desk's policy settings (refund windows, desk limit, on-call supervisor)."""
    return {r["key"]: r["value"] for r in db.query("SELECT key, value FROM policies ORDER BY key")}


def list_supervisors(db: RolloutDatabase) -> list[dict[str, Any]]:
    """Supervisors who can approve refunds, with their approval limits."""
    rows = db.query(
        "SELECT id, name, approval_limit_cents FROM agents WHERE role = 'supervisor' "
        "ORDER BY approval_limit_cents"
    )
    return [
        {"agent_id": r["id"], "name": r["name"], "approval_limit": _dollars(r["approval_limit_cents"])}
        for r in rows
    ]


def cancel_order(db: RolloutDatabase, order_id: int) -> dict[str, Any]:
    """Cancel an order that has not shipped yet."""
    order = _order(db, order_id)
    if order["status"] != "placed":
        raise DeskError(f"order {order_id} is {order['status']}; only placed orders can be cancelled")
    _active(db, order["customer_id"])
    db.execute("UPDATE orders SET status = 'cancelled' WHERE id = ?", (order_id,))
    return {"order_id": order_id, "status": "cancelled"}


def _active(db: RolloutDatabase, customer_id: int) -> None:
    row = db.one("SELECT status FROM customers WHERE id = ?", (customer_id,))
    if row is None or row["status"] != "active":
        raise DeskError("the customer's account is suspended: no cancellations or refunds")


def request_approval(db: RolloutDatabase, order_id: int, amount: float, supervisor_id: str) -> dict[str, Any]:
    """Ask a supervisor to approve a refund above the desk limit; returns the approval id."""
    cents = _cents(amount)
    order = _order(db, order_id)
    sup = db.one("SELECT id, role, approval_limit_cents FROM agents WHERE id = ?", (supervisor_id,))
    if sup is None or sup["role"] != "supervisor":
        raise DeskError(f"{supervisor_id[:40]!r} is not a supervisor")
    if sup["id"] == ACTING_AGENT:
        raise DeskError("an approval cannot be given by the agent who requests it")
    if cents > sup["approval_limit_cents"]:
        raise DeskError(f"{supervisor_id} can approve at most {_dollars(sup['approval_limit_cents'])}")
    if cents > order["amount_cents"] - order["refunded_cents"]:
        raise DeskError("the amount is more than is left to refund on this order")
    approval_id = db.execute(
        "INSERT INTO approvals(order_id, amount_cents, requested_by, approved_by, used) "
        "VALUES (?, ?, ?, ?, 0)",
        (order_id, cents, ACTING_AGENT, supervisor_id),
    )
    return {"approval_id": approval_id, "approved_by": supervisor_id, "amount": _dollars(cents)}


def issue_refund(
    db: RolloutDatabase, order_id: int, amount: float, reason: str, approval_id: int | None = None
) -> dict[str, Any]:
    """Refund a delivered order (above the desk limit, pass the approval_id of an approval)."""
    cents = _cents(amount)
    reason = _text(reason, "reason")
    order = _order(db, order_id)
    _active(db, order["customer_id"])
    if order["status"] != "delivered":
        raise DeskError(f"order {order_id} is {order['status']}; only delivered orders can be refunded")
    if cents > order["amount_cents"] - order["refunded_cents"]:
        raise DeskError("the amount is more than is left to refund on this order")
    if cents > DESK_LIMIT_CENTS:
        if approval_id is None:
            raise DeskError(f"refunds above {_dollars(DESK_LIMIT_CENTS)} need a supervisor's approval_id")
        approval = db.one(
            "SELECT * FROM approvals WHERE id = ? AND order_id = ? AND used = 0", (approval_id, order_id)
        )
        if approval is None or approval["amount_cents"] < cents:
            raise DeskError(f"approval {approval_id} does not cover this refund")
        db.execute("UPDATE approvals SET used = 1 WHERE id = ?", (approval_id,))
    db.execute("UPDATE orders SET refunded_cents = refunded_cents + ? WHERE id = ?", (cents, order_id))
    refund_id = db.execute(
        "INSERT INTO refunds(order_id, amount_cents, reason, issued_by, approval_id) VALUES (?, ?, ?, ?, ?)",
        (order_id, cents, reason, ACTING_AGENT, approval_id if cents > DESK_LIMIT_CENTS else None),
    )
    return {"refund_id": refund_id, "order_id": order_id, "amount": _dollars(cents)}


def update_email(db: RolloutDatabase, customer_id: int, new_email: str) -> dict[str, Any]:
    """Change a customer's email address."""
    email = new_email.strip().lower()
    if not _EMAIL.match(email):
        raise DeskError("not a valid email address")
    if db.one("SELECT id FROM customers WHERE email = ?", (email,)) is not None:
        raise DeskError("that email address belongs to another customer")
    if not db.execute("UPDATE customers SET email = ? WHERE id = ?", (email, customer_id)):
        raise DeskError(f"no customer {customer_id}")
    return {"customer_id": customer_id, "email": email}


def add_note(db: RolloutDatabase, ticket_id: int, body: str) -> dict[str, Any]:
    """Add an internal note to an open ticket."""
    _ticket(db, ticket_id)
    note_id = db.execute(
        "INSERT INTO notes(ticket_id, author, body) VALUES (?, ?, ?)",
        (ticket_id, ACTING_AGENT, _text(body, "body")),
    )
    return {"note_id": note_id, "ticket_id": ticket_id}


def resolve_ticket(db: RolloutDatabase, ticket_id: int) -> dict[str, Any]:
    """Mark an open ticket resolved."""
    _ticket(db, ticket_id)
    db.execute("UPDATE tickets SET status = 'resolved', assignee = ? WHERE id = ?", (ACTING_AGENT, ticket_id))
    return {"ticket_id": ticket_id, "status": "resolved"}


def escalate_ticket(db: RolloutDatabase, ticket_id: int, supervisor_id: str) -> dict[str, Any]:
    """Hand an open ticket to a supervisor."""
    _ticket(db, ticket_id)
    sup = db.one("SELECT role FROM agents WHERE id = ?", (supervisor_id,))
    if sup is None or sup["role"] != "supervisor" or supervisor_id == ACTING_AGENT:
        raise DeskError(f"{supervisor_id[:40]!r} is not another supervisor")
    db.execute(
        "UPDATE tickets SET status = 'escalated', assignee = ? WHERE id = ?", (supervisor_id, ticket_id)
    )
    return {"ticket_id": ticket_id, "status": "escalated", "assignee": supervisor_id}


TOOLS = [
    find_customer,
    get_customer_orders,
    get_order,
    get_policies,
    list_supervisors,
    cancel_order,
    request_approval,
    issue_refund,
    update_email,
    add_note,
    resolve_ticket,
    escalate_ticket,
]
