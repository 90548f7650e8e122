"""Instructions per call of each piece of the runner's per-rollout work, counted with cachegrind.

Each piece runs ``--calls`` times in a fresh child under ``valgrind --tool=cachegrind
--cache-sim=no``, and once more with no calls; the difference over ``--calls`` is the piece's
user-space instructions per call (start-up and set-up cancel out). The pieces are what
``bench_runner_floor.py``'s verihub side does per rollout beyond the raw client::

    python bench/bench_runner_pieces.py                    # every piece, 20,000 calls each
    python bench/bench_runner_pieces.py --pieces line,task_hash_line --calls 5000
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from typing import Any

_BODY: dict[str, Any] = {
    "model": "fake",
    "messages": [{"role": "user", "content": "Compute 5 + 5. Reply as: Answer: <integer>"}],
    "max_tokens": 16,
    "seed": 12345,
}
_ANSWER = json.dumps(
    {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Answer: 42"}}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
    }
).encode()


def pieces() -> dict[str, Callable[[], Any]]:
    """Each piece as a call without arguments, on records shaped like a single-turn rollout's."""
    from hub.env.grading import task_json
    from hub.env.types import Grade, Message, Rollout, Task, Timing, Usage
    from hub.run.client import _json_body
    from hub.run.completions import parse_completion
    from hub.run.metrics import PerTask, SummaryBuilder
    from hub.run.records import rollout_line

    task = Task(id="t5", prompt=_BODY["messages"][0]["content"], answer="10", metadata={"difficulty": 1})
    answer = Message(role="assistant", content="Answer: 42")
    rollout = Rollout(
        task_id="t5",
        rollout_index=0,
        messages=[*task.messages(), answer],
        completion="Answer: 42",
        usage=Usage(prompt_tokens=10, completion_tokens=3),
        timing=Timing(started_at=1.0),
        grade=Grade(score=1.0, passed=True, status="correct"),
        reward=1.0,
        passed=True,
    )
    builder = SummaryBuilder(env_id="x", env_version="1", model="m", rollouts_per_task=1)
    row = {"task_id": "t5", "n": 1, "n_passed": 1, "n_errors": 0, "pass_rate": 1.0, "mean_reward": 1.0}
    return {
        "request_body": lambda: _json_body(_BODY),
        "json_dumps_body": lambda: json.dumps(_BODY).encode(),
        "parse_answer": lambda: parse_completion(_ANSWER),
        "json_loads_answer": lambda: json.loads(_ANSWER),
        "opening_messages": task.messages,
        "rollout_record": lambda: Rollout.__pydantic_validator__.validate_python(
            {"task_id": "t5", "rollout_index": 0, "messages": rollout.messages, "completion": "Answer: 42"}
            | {"usage": rollout.usage, "timing": rollout.timing}
        ),
        "timing_record": lambda: Timing.__pydantic_validator__.validate_python({"started_at": 1.0}),
        "line": lambda: rollout_line(rollout),
        "task_hash_line": lambda: task_json(task),
        "summary_add": lambda: builder.add(rollout),
        "summary_row": lambda: PerTask.__pydantic_validator__.validate_python(row),
        "nothing": lambda: None,
    }


def count(piece: str, calls: int) -> int:
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    cmd += [sys.executable, __file__, "--child", piece, "--calls", str(calls)]
    done = subprocess.run(
        cmd, capture_output=True, text=True, check=False, env={**os.environ, "PYTHONHASHSEED": "0"}
    )
    refs = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode != 0 or refs is None:
        raise RuntimeError(f"{piece}: {done.stderr[-2000:]}")
    return int(refs.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pieces", help="comma-separated subset (default: all)")
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if args.child:
        call = pieces()[args.child]
        for _ in range(args.calls):
            call()
        return
    names = args.pieces.split(",") if args.pieces else list(pieces())
    unknown = set(names) - set(pieces())
    if unknown:
        parser.error(f"unknown pieces: {sorted(unknown)}; known: {', '.join(pieces())}")
    print(f"{'piece':<22}{'k instructions per call':>26}")
    for name in names:
        per_call = (count(name, args.calls) - count(name, 0)) / args.calls
        print(f"{name:<22}{per_call / 1000:>26.1f}", flush=True)


if __name__ == "__main__":
    main()
