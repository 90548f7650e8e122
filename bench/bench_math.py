"""Speed of graders.math on MATH-500-style answer pairs, side by side with Math-Verify.

For every MATH-500 item up to three responses are graded: one ending in the reference answer
boxed; one ending in an equivalent answer written differently (``\\dfrac``, ``\\left(``, spacing,
``0.5`` for ``\\frac12``, ``\\sqrt{3}/2`` for ``\\frac{\\sqrt{3}}{2}``, sums reordered: forms that
string matching does not settle, so the LaTeX grammar and sympy run); and one with the answer's
last integer off by one. Measured in one process (one core):

- ``graders.math.check_inline`` with each reference parsed once and reused (answers are never
  cached), throughput and p50/p99 latency;
- plain ``math_verify.verify(parse(gold), parse(pred))``, parsing both every time;
- Math-Verify with the gold parsed once too (the fairest comparison);

The three run interleaved pair by pair (alternating order) after one untimed warm pass (imports,
ANTLR's prediction cache: the steady state of a persistent worker), and sympy's and Math-Verify's
caches are cleared before every timed call, so no call reuses another's parse of the same string.
With ``--steady`` the warm pass covers half the items and the other half is timed with every
cache kept (what a long-running worker sees on new answers).
- the worker pool's round trip: a no-op call, and a pooled check's wall time minus its time in
  the worker.

Run::

    python bench/bench_math.py               # all 500 items (about 1,400 pairs)
    python bench/bench_math.py --items 200 --json bench-math.json
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

from graders.math import MathOptions, check_inline
from graders.math.parse import read_reference, reference_objects, warm_up
from graders.pool import PoolConfig, WorkerPool, timed_call

_INTEGER = re.compile(r"\d+")


_UNIT = re.compile(r"\s*\\(?:mbox|text)\s*\{[^{}]*\}(?:\^\{?\d\}?)?\s*$")


def _off_by_one(answer: str) -> str:
    """The last integer plus one (outside a trailing unit such as ``\\mbox{ cm}^2``)."""
    unit = _UNIT.search(answer)
    body, tail = (answer[: unit.start()], answer[unit.start() :]) if unit else (answer, "")
    matches = list(_INTEGER.finditer(body))
    if not matches:
        return answer + "+1"
    m = matches[-1]
    return body[: m.start()] + str(int(m.group()) + 1) + body[m.end() :] + tail


_SIMPLE_FRACTION = re.compile(r"^(-?)\\frac\{(\d+)\}\{(\d+)\}$")
_FRACTION = re.compile(r"\\frac\{([^{}]+)\}\{([^{}]+)\}")
_TOP_SUM = re.compile(r"^([^+(){}\[\]]+?)\s*\+\s*([^+(){}\[\]]+)$")


def _terminating_decimal(answer: str) -> str | None:
    m = _SIMPLE_FRACTION.match(answer.strip())
    if m is None or int(m.group(3)) == 0:
        return None
    value = Fraction(int(m.group(2)), int(m.group(3)))
    places = 0
    while (value * 10**places).denominator != 1:
        places += 1
        if places > 12:
            return None  # not a terminating decimal
    scaled = value.numerator * 10**places // value.denominator
    whole, frac = divmod(scaled, 10**places)
    return m.group(1) + (f"{whole}.{frac:0{places}d}" if places else str(whole))


def reformatted(answer: str) -> str | None:
    """An equivalent answer written differently, or None when no rewrite applies."""
    if "\\text" in answer or "\\begin" in answer or "_" in answer:
        return None
    decimal = _terminating_decimal(answer)
    if decimal is not None:
        return decimal
    if re.fullmatch(r"\d{4,}", answer):
        return f"{int(answer):,}".replace(",", "{,}")
    out = answer
    sum_match = _TOP_SUM.match(out)
    if sum_match is not None and "=" not in out and "," not in out:
        first, second = sum_match.group(1).strip(), sum_match.group(2).strip()
        out = f"{second} - {first[1:]}" if first.startswith("-") else f"{second} + {first}"
    out = _FRACTION.sub(lambda m: f"({m.group(1)})/({m.group(2)})", out, count=1) if "\\sqrt" in out else out
    out = out.replace("\\frac", "\\dfrac")
    if out.startswith(("(", "[")):
        out = out.replace(",", ", ")
    if "\\left" not in out:
        out = out.replace("(", "\\left( ").replace(")", " \\right)")
    return out if out != answer else None


def load_pairs(data_dir: Path, items: int) -> list[tuple[str, str, bool]]:
    """``(reference, response, should_pass)`` pairs from MATH-500 (see the module docstring)."""
    pairs: list[tuple[str, str, bool]] = []
    with (data_dir / "math500" / "test.jsonl").open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()][:items]
    for row in rows:
        gold = row["answer"]
        pairs.append((gold, f"Putting it together, the answer is $\\boxed{{{gold}}}$.", True))
        other = reformatted(gold)
        if other is not None:
            pairs.append((gold, f"Simplifying, we get $\\boxed{{{other}}}$.", True))
        pairs.append((gold, f"So the final answer is $\\boxed{{{_off_by_one(gold)}}}$.", False))
    return pairs


def _timed(fn: Callable[[], bool]) -> tuple[bool, float]:
    start = time.perf_counter()
    ok = fn()
    return ok, time.perf_counter() - start


def _summary(name: str, latencies: list[float], correct: int, total: int) -> dict[str, Any]:
    ordered = sorted(latencies)
    total_s = sum(latencies)
    return {
        "name": name,
        "checks": len(latencies),
        "checks_per_s": len(latencies) / total_s if total_s else float("inf"),
        "p50_ms": 1000 * statistics.median(ordered),
        "p99_ms": 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
        "max_ms": 1000 * ordered[-1],
        "agree_with_label": f"{correct}/{total}",
    }


def _clear_caches() -> None:
    """Forget every parse and sympy result (outside the timings), so that no implementation gets
    a cache hit on a string it, or the other one, has seen. References stay parsed for ours."""
    import math_verify.parser
    from sympy.core.cache import clear_cache

    math_verify.parser.parse_latex_cached.cache_clear()
    clear_cache()


def bench_side_by_side(
    pairs: list[tuple[str, str, bool]], options: MathOptions, *, cold: bool = True
) -> list[dict[str, Any]]:
    """Time the three implementations on the same pairs, interleaved pair by pair.

    ``cold``: warm up on all pairs, then clear every cache before each timed call. Otherwise
    (steady state) warm up on the odd items and time the even ones with caches as they are.
    """
    from math_verify import parse, verify

    def ours(gold: str, response: str) -> bool:
        return check_inline(response, reference=gold, options=options).passed

    def mv_plain(gold: str, response: str) -> bool:
        return bool(verify(parse(f"${gold}$"), parse(response)))

    golds = {gold: parse(f"${gold}$") for gold, _, _ in pairs}

    def mv_gold_once(gold: str, response: str) -> bool:
        return bool(verify(golds[gold], parse(response)))

    warm, timed = (pairs, pairs) if cold else (pairs[2::4] + pairs[3::4], pairs[0::4] + pairs[1::4])
    for gold, _, _ in pairs:  # references parsed once, outside the timing
        reference_objects(read_reference(gold).text)
    impls: list[tuple[str, Callable[[str, str], bool]]] = [
        ("graders.math (reference parsed once)", ours),
        ("math_verify.verify(parse(gold), parse(pred))", mv_plain),
        ("math_verify, gold parsed once", mv_gold_once),
    ]
    for gold, response, _ in warm:  # warm pass: ANTLR's prediction cache, imports
        for _, fn in impls:
            fn(gold, response)
    latencies: dict[str, list[float]] = {name: [] for name, _ in impls}
    agree: dict[str, int] = {name: 0 for name, _ in impls}
    for i, (gold, response, label) in enumerate(timed):
        order = impls if i % 2 == 0 else impls[::-1]
        for name, fn in order:
            if cold:
                _clear_caches()
            ok, dt = _timed(functools.partial(fn, gold, response))
            latencies[name].append(dt)
            agree[name] += ok == label
    return [_summary(name, latencies[name], agree[name], len(timed)) for name, _ in impls]


def bench_pool(pairs: list[tuple[str, str, bool]], options: MathOptions, calls: int) -> dict[str, Any]:
    """The pool's cost per call: wall time of a pooled check minus the time it took in the worker."""
    sample = pairs[: min(len(pairs), calls)]
    with WorkerPool(PoolConfig(size=1, initializer=warm_up)) as pool:
        pool.wait_ready()
        noop = []
        for _ in range(calls):
            start = time.perf_counter()
            pool.submit(abs, -1)
            noop.append(time.perf_counter() - start)
        overhead = []
        for gold, response, _ in sample:
            start = time.perf_counter()
            inside, _ = pool.submit(timed_call, check_inline, response, reference=gold, options=options)
            overhead.append(time.perf_counter() - start - inside)
    return {
        "noop_round_trip_ms": 1000 * statistics.mean(noop),
        "overhead_per_check_ms": 1000 * statistics.mean(overhead),
        "overhead_per_check_p99_ms": 1000 * sorted(overhead)[int(0.99 * (len(overhead) - 1))],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="shared data folder")
    parser.add_argument("--items", type=int, default=500, help="MATH-500 items to use (2 pairs each)")
    parser.add_argument("--pool-calls", type=int, default=200, help="calls for the pool overhead")
    parser.add_argument("--json", type=Path, default=None, help="write the results as JSON")
    parser.add_argument(
        "--steady",
        action="store_true",
        help="steady state: warm on half the items, time the other half, caches kept",
    )
    args = parser.parse_args(argv)
    if args.data is None:
        from hub.review.testing import shared_data_dir

        args.data = shared_data_dir(Path(__file__).resolve().parent)
    pairs = load_pairs(args.data, args.items)
    options = MathOptions()
    warm_up()
    from math_verify import parse

    parse("$\\frac{1}{2}$")  # import and warm Math-Verify too
    results = bench_side_by_side(pairs, options, cold=not args.steady)
    mode = "steady state (warm on half, caches kept)" if args.steady else "caches cleared before every call"
    print(f"{results[0]['checks']} MATH-500 answer pairs, one process, {mode}")
    for r in results:
        print(
            f"  {r['name']:48s} {r['checks_per_s']:8.1f} checks/s  p50 {r['p50_ms']:6.2f} ms  "
            f"p99 {r['p99_ms']:6.2f} ms  max {r['max_ms']:7.1f} ms  agree {r['agree_with_label']}"
        )
    ratio_plain = results[0]["checks_per_s"] / results[1]["checks_per_s"]
    ratio_once = results[0]["checks_per_s"] / results[2]["checks_per_s"]
    print(
        f"  speed-up vs plain math_verify: {ratio_plain:.2f}x; "
        f"vs math_verify with gold parsed once: {ratio_once:.2f}x"
    )
    pool = bench_pool(pairs, options, args.pool_calls)
    print(
        f"  pool: no-op round trip {pool['noop_round_trip_ms']:.3f} ms; overhead of a pooled check "
        f"(wall time minus time in the worker) {pool['overhead_per_check_ms']:.3f} ms mean, "
        f"{pool['overhead_per_check_p99_ms']:.3f} ms p99"
    )
    if args.json is not None:
        payload = {
            "results": results,
            "ratio_vs_plain": ratio_plain,
            "ratio_vs_gold_once": ratio_once,
            "pool": pool,
        }
        args.json.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
