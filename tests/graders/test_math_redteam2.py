"""A second red-team pass over the math grader: responses that do not commit to the reference.

Every row of ``FALSE_PASSES`` passed under ``strict=True`` before the rule named above its group
(see ``docs/graders-math.md``); ``MUST_PASS`` holds the nearby forms those rules must keep
accepting.
"""

from __future__ import annotations

import time

import pytest

from graders.extract import extract_answers, find_boxed
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
    # ... and a number with a short remark commits to the number
    ("\\boxed{5}\nFinal Answer: 6 dollars", "5"),
    ("\\boxed{5}\nFinal Answer: $6$ apples", "5"),
    ("\\boxed{5}\nAnswer: 6 \\text{ apples}", "5"),
    ("\\boxed{5}\nAnswer: 6 (six)", "5"),
    ("#### 5\nAnswer: 6 eggs", "5"),
    ("\\boxed{5}\n\nWait, the answer is 6 apples.", "5"),
    # an answer stated in running text after the last box (or #### line) takes it back
    ("The answer is \\boxed{5}. Wait, actually the answer is 6.", "5"),
    ("\\boxed{5}\n\nWait, I made an error. The correct answer is $6$.", "5"),
    ("\\boxed{5} is wrong; the answer is 6.", "5"),
    ("$\\boxed{5}$\n\nThe final answer is $6$.", "5"),
    ("#### 5\nThe answer is 6.", "5"),
    ("\\boxed{\\frac{1}{2}}\n\nHmm, no: the answer is $\\frac{1}{3}$.", "\\frac{1}{2}"),
    # ... and so does a bare number ending the response after it (or after an answer line)
    ("\\boxed{5}\n\n6", "5"),
    ("$\\boxed{5}$.\n\n**6**", "5"),
    ("\\boxed{5}\n\n**Final Answer**\n\n$6$", "5"),
    ("#### 5\n\n6", "5"),
    ("The answer is 5.\n\n6", "5"),
    ("Answer: 5\n\n$6$", "5"),
    # a box the reader cannot see (\phantom, an HTML comment) is no committed answer
    ("The answer is 6.\n\n$\\phantom{\\boxed{5}}$", "5"),
    ("The answer is 6. $\\hphantom{\\boxed{5}}$", "5"),
    ("The answer is 6. $\\vphantom{\\boxed{5}}$", "5"),
    ("The answer is 6. <!-- \\boxed{5} -->", "5"),
    ("The answer is 6.\n<!--\n\\boxed{5}\n-->", "5"),
    # a box right after "not" is denied, not committed to
    ("The answer is definitely not \\boxed{5}.", "5"),
    ("The answer is not $\\boxed{5}$.", "5"),
    ("It isn't \\(\\boxed{5}\\).", "5"),
    ("$x \\neq \\boxed{5}$", "5"),
    # an identity or a definition is an equation: neither side is a name, so it states no value
    ("\\boxed{\\pi + 1 \\equiv \\pi}", "\\pi"),
    ("\\boxed{3\\sqrt{13} + 1 \u2261 3\\sqrt{13}}", "3\\sqrt{13}"),
    ("\\boxed{6 - 5i + 1 \u2254 6 - 5i}", "6 - 5i"),
    ("\\boxed{p - q + 1 := p - q}", "p - q"),
    # with no box or answer phrase, the short lines a response ends in are all candidates
    ("5\n6", "6"),
    ("We get\n\n5\n\nor\n\n6", "6"),
    ("The total is:\n$5$\n$6$", "6"),
    # a box followed by a question mark asks, it does not answer
    ("\\boxed{5}?", "5"),
    ("Is it $\\boxed{5}$? I'm not sure.", "5"),
    # a box that is an operand of the math around it is not the value the reader sees
    ("$x = -\\boxed{5}$", "5"),
    ("$\\frac{1}{\\boxed{5}}$", "5"),
    ("$\\sqrt{\\boxed{25}}$", "25"),
    ("$\\boxed{5}^2$", "5"),
    ("$\\boxed{5} \\times 10^3$", "5"),
    ("$10^{\\boxed{5}}$", "5"),
    ("$2 \\cdot \\boxed{5}$", "5"),
    # a box in a fenced code block is quoted code, not the answer
    ("The answer is 6.\n```\n\\boxed{5}\n```", "5"),
    ("Final answer: 6\n~~~\n\\boxed{5}\n~~~", "5"),
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
    ("\\boxed{5}\nFinal Answer: 5 apples", "5"),
    ("\\boxed{5}\nAnswer: 2 rows of 3 chairs", "5"),
    ("\\boxed{5}. The answer is 2 more than 3.", "5"),
    ("\\boxed{5}\nThe answer is 5 because 2 + 3 = 5.", "5"),
    ("\\boxed{5}\n\n$$5$$", "5"),
    ("\\boxed{\\frac{1}{2}}\n\n0.5", "\\frac{1}{2}"),
    ("\\boxed{5}\n\nCheck: 5 + 1 = 6", "5"),
    ("The answer is 5.\n\n$$5$$", "5"),
    ("The answer is \\boxed{5}. I hope it is correct.", "5"),
    ("The final answer is $\\boxed{5}$.\n\nThe answer is correct because 2 + 3 = 5.", "5"),
    ("\\boxed{5}\n\nSo the answer is $5$ apples... I mean 5 dollars.", "5"),
    ("\\boxed{5}\n\nThe answer is 5 dollars.", "5"),
    # running text before the final box is a draft, not a second answer
    ("The answer is 6. Hmm, let me recheck: 2 + 3 = 5, so \\boxed{5}.", "5"),
    # a phantom that holds no box is layout
    ("$1 \\hphantom{)} = 1$\n\n\\boxed{5}", "5"),
    ("Is 6 right? No, not 6.\n\n\\boxed{5}", "5"),
    ("\\boxed{5}, not 6", "5"),
    ("A: 5", "5"),
    ("so we get\n6", "6"),
    ("so we get\n6\n$6$", "6"),
    ("The total is:\n\n---\n\n6", "6"),
    ("The answer is \\boxed{5}. Any questions?", "5"),
    ("- \\boxed{5}", "5"),
    ("**\\boxed{5}**", "5"),
    ("So the answer -- \\boxed{5}", "5"),
    ("$3 + 2 = \\boxed{5}$", "5"),
    ("$\\boxed{30}^\\circ$", "30"),
    ("$\\boxed{10}\\%$", "10"),
    ("$\\boxed{52}_8$", "52_8"),
    ("\\[= 8\\boxed{\\textbf{321}}\\]", "321"),  # AIME: the last three digits of 8321
    ("\\boxed{x \\equiv 5}", "5"),
    ("\\boxed{f(x) := x^2 + 1}", "x^2 + 1"),
    ("\\boxed{n \\equiv 3 \\pmod{7}}", "n \\equiv 3 \\pmod{7}"),
    # a box printed by code in a fenced block does not count, the real box does
    ("```python\nprint(f'\\\\boxed{{{ans}}}')\n```\nOutput: 5\n\n\\boxed{5}", "5"),
    ("```\n\\boxed{5}\n```", "5"),
]


@pytest.mark.parametrize(("response", "reference"), MUST_PASS)
def test_nearby_form_still_passes(response: str, reference: str) -> None:
    verdict = check_inline(response, reference=reference, options=STRICT)
    assert verdict.passed, verdict


def test_find_boxed_reads_a_braceless_box_without_a_space() -> None:
    assert find_boxed("\\boxed5 and \\boxed 6 and \\boxed{7}") == ["5", "6", "7"]
    assert find_boxed("\\boxedx") == []  # a different command


def test_hidden_and_negated_boxes_are_flagged() -> None:
    assert extract_answers("$\\phantom{\\boxed{5}}$ \\boxed{5}").flag == "hidden_box"
    assert extract_answers("$\\phantom\\boxed{5}$ \\boxed{5}").flag == "hidden_box"
    assert extract_answers("<!-- \\boxed{5} --> \\boxed{5}").flag == "hidden_box"
    assert extract_answers("$\\hphantom{10}$ \\boxed{5}").flag is None
    assert extract_answers("not \\boxed{5}").flag == "negated_box"
    assert extract_answers("\\boxed{5}, not 6; nothing else").flag is None


def test_a_box_in_fenced_code_is_a_last_resort() -> None:
    fenced = extract_answers("```\n\\boxed{5}\n```\nThe answer is 6.")
    assert fenced.answers == ("6",) and fenced.others == ("5",)
    alone = extract_answers("```\n\\boxed{5}\n```")
    assert alone.answers == ("5",) and alone.form == "boxed"


def test_running_text_after_the_box_is_cross_checked_but_not_before() -> None:
    after = extract_answers("\\boxed{5}\nWait, the answer is 6.")
    assert after.answers == ("5",) and after.others == ("6",)
    before = extract_answers("The answer is 6. No: \\boxed{5}")
    assert before.answers == ("5",) and before.others == ()


def test_new_scans_stay_linear_on_hostile_input() -> None:
    start = time.process_time()  # CPU time: a busy machine does not count
    extract_answers("\\phantom{" * 30_000 + "\\boxed{5}")
    extract_answers("\\phantom{x}" * 20_000 + "\\boxed{5}")
    extract_answers("<!-- -->" * 30_000 + "\\boxed{5}")
    extract_answers("```\n" * 60_000 + "\\boxed{5}")
    extract_answers("not" + " " * 250_000 + "\\boxed{5}")
    extract_answers("\\boxed{5}" + " the answer is " * 18_000)
    extract_answers("\\boxed{5}" + "\n6" * 100_000)
    assert time.process_time() - start < 2.0
