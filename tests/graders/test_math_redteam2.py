"""A second red-team pass over the math grader: responses that do not commit to the reference.

Every row of ``FALSE_PASSES`` passed under ``strict=True`` before the rule named above its group
(see ``docs/graders-math.md``); ``MUST_PASS`` holds the nearby forms those rules must keep
accepting.
"""

from __future__ import annotations

import pytest

from graders.extract import find_boxed
from graders.math import MathOptions, check_inline

STRICT = MathOptions(strict=True)

# (response, reference)
FALSE_PASSES: list[tuple[str, str]] = [
    # a brace-less box with no space (``\boxed6`` is LaTeX for \boxed{6}) is a second box
    ("\\boxed 5 and \\boxed6", "5"),
    ("$\\boxed{5}$ or $\\boxed6$", "5"),
    # an answer line is an answer line whatever its case
    ("\\boxed{5}\nFinal answer: 6", "5"),
    ("\\boxed{5}\nANSWER: 6", "5"),
    ("\\boxed{5}\n**Final answer:** $6$", "5"),
    ("#### 5\nfinal answer: 6", "5"),
]


@pytest.mark.parametrize(("response", "reference"), FALSE_PASSES)
def test_false_pass_fails(response: str, reference: str) -> None:
    verdict = check_inline(response, reference=reference, options=STRICT)
    assert not verdict.passed, verdict
    assert verdict.status in ("incorrect", "unparseable", "no_answer"), verdict


# (response, reference): forms the rules above must keep accepting
MUST_PASS: list[tuple[str, str]] = [
    ("\\boxed5", "5"),
    ("$\\boxed 5$", "5"),
    ("\\boxed{5}\nFinal answer: 5", "5"),
    ("\\boxed{5}\nANSWER: $5$", "5"),
]


@pytest.mark.parametrize(("response", "reference"), MUST_PASS)
def test_nearby_form_still_passes(response: str, reference: str) -> None:
    verdict = check_inline(response, reference=reference, options=STRICT)
    assert verdict.passed, verdict


def test_find_boxed_reads_a_braceless_box_without_a_space() -> None:
    assert find_boxed("\\boxed5 and \\boxed 6 and \\boxed{7}") == ["5", "6", "7"]
    assert find_boxed("\\boxedx") == []  # a different command
