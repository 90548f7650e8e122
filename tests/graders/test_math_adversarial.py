"""Adversarial inputs: bounded time, `timeout`/`unparseable` (never a crash), no code execution."""

from __future__ import annotations

from pathlib import Path

import pytest

from graders.math import MathOptions, check
from graders.pool import WorkerPool

TIMEOUT = 2.0

HOSTILE = {
    "tower_of_powers": "\\boxed{10^{10^{10^{10}}}}",
    "power_tower_2": "\\boxed{2^{2^{2^{2^{2^{2^{2}}}}}}}",
    "two_level_tower": "\\boxed{9^{9^{9}}}",
    "huge_power_sum": "\\boxed{7^{7^{7}} + 3^{3^{33}}}",
    "big_factorial": "\\boxed{99999!}",
    "nested_braces": "\\boxed{" + "{" * 5000 + "1" + "}" * 5000 + "}",
    "nested_parentheses": "\\boxed{" + "(" * 900 + "1" + ")" * 900 + "}",
    "long_sum": "\\boxed{" + "1+" * 50_000 + "1}",
    "long_expression_in_limit": "\\boxed{" + "x+" * 900 + "x}",
    "unbalanced": "\\boxed{" + "(" * 3000 + "}",
    "regex_bait_spaces": "the answer is " + " " * 100_000 + "x",
    "regex_bait_digits": "#### " + "1," * 60_000,
    "regex_bait_units": "\\boxed{5" + " cm" * 600 + "}",
    "huge_exponent": "\\boxed{x^{" + "9" * 1500 + "}}",
    "deep_fraction": "\\boxed{" + "\\frac{1}{" * 300 + "2" + "}" * 300 + "}",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_is_bounded(name: str, math_pool: WorkerPool) -> None:
    verdict = check(HOSTILE[name], reference="5", pool=math_pool, timeout=TIMEOUT)
    assert not verdict.passed
    assert verdict.status in ("timeout", "unparseable", "incorrect", "no_answer"), verdict
    # the pool keeps working afterwards
    assert check("\\boxed{5}", reference="5", pool=math_pool, timeout=30).passed


def test_a_timeout_is_reported_as_timeout(math_pool: WorkerPool) -> None:
    # cheap enough for the cost screen, far over 20 ms to check
    verdict = check("\\boxed{\\tan(\\tan(x))}", reference="x^{2}+1", pool=math_pool, timeout=0.02)
    assert verdict.status == "timeout" and not verdict.passed
    assert check("\\boxed{5}", reference="5", pool=math_pool, timeout=30).passed


CODE = [
    "__import__('os').system('touch {marker}')",
    "eval(\"__import__('os').system('touch {marker}')\")",
    "exec('import os; os.system(\"touch {marker}\")')",
    "(lambda: __import__('os').system('touch {marker}'))()",
    "open('{marker}', 'w').write('x')",
    "__builtins__.__import__('subprocess').call(['touch', '{marker}'])",
]


@pytest.mark.parametrize("template", CODE)
@pytest.mark.parametrize("wrap", ["\\boxed{{{}}}", "{}", "The answer is {}", "#### {}"])
def test_code_in_answers_is_never_run(
    template: str, wrap: str, tmp_path: Path, math_pool: WorkerPool
) -> None:
    marker = tmp_path / "pwned"
    response = wrap.format(template.format(marker=marker))
    for options in (MathOptions(), MathOptions(strict=True)):
        verdict = check(response, reference="0", options=options, pool=math_pool, timeout=TIMEOUT)
        assert not verdict.passed
    assert not marker.exists()


def test_model_text_never_reaches_sympys_string_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every string that reaches ``parse_expr`` (what ``sympify`` uses for strings) must be a
    number token the LaTeX lexer produced, never model text."""
    import re

    import latex2sympy2_extended.latex2sympy2 as l2s
    import math_verify.parser as mv_parser
    import sympy.parsing.sympy_parser as sympy_parser

    from graders.math import check_inline

    seen: list[str] = []
    original = sympy_parser.parse_expr

    def recording(text: object, *args: object, **kwargs: object) -> object:
        seen.append(str(text))
        return original(text, *args, **kwargs)  # type: ignore[arg-type]

    responses = [
        wrap.format(template.format(marker="/nonexistent/x"))
        for template in CODE
        for wrap in ("\\boxed{{{}}}", "{}")
    ] + [
        "\\boxed{x^2 + \\frac{1}{2}}",
        "\\boxed{1.25}",
        "\\boxed{(1, 2]}",
        "\\boxed{\\text{__import__('os')}}",
        "The answer is os.system('ls')",
        "\\boxed{\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}}",
    ]
    for response in responses:  # first run: lazy imports (sympy's unit tables sympify their names)
        check_inline(response, reference="x^2 + 0.5")
    for module in (sympy_parser, l2s, mv_parser):
        monkeypatch.setattr(module, "parse_expr", recording)
    mv_parser.parse_latex_cached.cache_clear()
    for response in responses:
        check_inline(response, reference="x^2 + 0.5")
    assert seen  # the recorder is wired in: number tokens do pass through it
    assert [t for t in seen if not re.fullmatch(r"[\d.,]+", t)] == []
