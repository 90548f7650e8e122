"""Hypothesis strategies shared by the generated grader tests: answer-preserving rewrites of a
gold answer and near-miss mutations, each drawn from a small grammar rather than a fixed list."""

from __future__ import annotations

import string

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

__all__ = [
    "GENERATED",
    "benign_tail",
    "change_of_mind",
    "integer_forms",
    "lead",
    "markup_wrap",
    "retraction",
]

GENERATED = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
"""Bounded and reproducible in CI; a failure prints the minimal example."""

_WORD = st.text(string.ascii_lowercase, min_size=2, max_size=9).filter(
    lambda w: w not in {"is", "are", "was", "were", "be", "am", "has", "have", "had", "do", "does", "did"}
)


@st.composite
def lead(draw: st.DrawFn) -> str:
    """A short discourse lead closed by punctuation: ``Nope,`` ``Hmm, wait:`` ``Edit:``, with
    made-up words too (the policy reads the construction, not a word list)."""
    words = draw(
        st.lists(
            st.one_of(
                st.sampled_from(["nope", "hmm", "wait", "edit", "correction", "update", "oops", "actually"]),
                _WORD,
            ),
            min_size=1,
            max_size=3,
        )
    )
    text = " ".join(words)
    return text[0].upper() + text[1:] + draw(st.sampled_from([",", ":", "!", " \u2014", "..."]))


def change_of_mind(value: str) -> st.SearchStrategy[str]:
    """A sentence after the answer that gives ``value`` instead."""
    cores = st.sampled_from(
        [
            "{v}",
            "it's {v}",
            "it should be {v}",
            "make that {v}",
            "the answer is {v}",
            "that would be {v}",
            "I meant {v}",
            "change it to {v}",
        ]
    )
    return st.builds(
        lambda lead_text, core, end: f"{lead_text} {core.format(v=value)}{end}",
        lead(),
        cores,
        st.sampled_from([".", ""]),  # not "!": "0!" is a factorial
    )


def retraction() -> st.SearchStrategy[str]:
    """A sentence after the answer that takes it back without a new value."""
    return st.builds(
        lambda lead_text, core: f"{lead_text} {core}",
        lead(),
        st.sampled_from(
            [
                "that's wrong.",
                "this is incorrect.",
                "I made a mistake somewhere.",
                "scratch that.",
                "never mind.",
                "I'm not sure about this.",
                "that answer is not right.",
            ]
        ),
    )


def benign_tail() -> st.SearchStrategy[str]:
    """Text after the answer that leaves it alone."""
    return st.sampled_from(
        [
            "",
            "\n\nHope this helps!",
            "\n\nThat is correct.",
            "\n\nThis is the final answer.",
            "\n\nLet me know if you have questions.",
            "\n\nI checked it twice.",
            "\n\nGood luck with the rest!",
        ]
    )


def markup_wrap(text: str) -> st.SearchStrategy[str]:
    """``text`` as a reader sees it under Markdown or HTML emphasis."""
    return st.sampled_from(
        [
            text,
            f"**{text}**",
            f"*{text}*",
            f"_{text}_",
            f"__{text}__",
            f"<b>{text}</b>",
            f"<em>{text}</em>",
            f"<span>{text}</span>",
        ]
    )


def integer_forms(n: int) -> st.SearchStrategy[str]:
    """``n`` written as a reader reads it: thousands separators (comma, thin space, LaTeX
    ``\\,``), a Unicode minus, full-width digits, inline math."""
    digits = str(abs(n))
    groups: list[str] = []
    while digits:
        groups.insert(0, digits[-3:])
        digits = digits[:-3]
    sign_forms = ["-", "\u2212"] if n < 0 else [""]
    body = st.sampled_from(
        [
            "".join(groups),
            ",".join(groups),
            "\u2009".join(groups),
            "\\,".join(groups),
            "".join(chr(ord(c) + 0xFEE0) for c in "".join(groups)),
        ]
    )
    plain = st.builds(lambda sign, b: sign + b, st.sampled_from(sign_forms), body)
    return plain.flatmap(lambda p: st.sampled_from([p, f"${p}$", f"\\({p}\\)"]))
