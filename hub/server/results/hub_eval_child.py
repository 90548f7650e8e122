"""One hub evaluation, in its own process:
``python -m hub.server.results.hub_eval_child WHEEL WHEEL_NAME SPEC OUT``.

SPEC is the JSON the worker wrote (environment id and content hash, model, base URL, the name of
the variable holding the key, task count, rollouts, seed). The reviewed wheel is unpacked and its
environment started in the sandbox (:func:`hub.review.check.wheelenv.sandboxed_wheel`); the model
client runs here, outside it, and the run is written by the same runner as ``verihub eval
--sandbox`` into ``OUT/run``. ``OUT/outcome.json`` holds ``{"error": null}`` or why it failed.
The key is read from this process's environment (the worker passes that one variable) and is
never written: the run's config records the base URL only.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from hub.review import sandboxed_wheel
from hub.run import EvalOptions
from hub.run.evaluate import evaluate
from hub.sandbox import Limits

__all__ = ["run_eval"]


def run_eval(wheel: Path, spec: dict[str, Any], out: Path, *, wall_s: float = 3600.0) -> None:
    """Evaluate ``spec``'s model on the wheel's environment into ``out`` (a new run directory)."""
    limits = Limits(wall_s=wall_s, cpu_s=int(wall_s))
    options = EvalOptions(api_key_env=spec.get("api_key_env") or "", concurrency=8)
    with sandboxed_wheel(wheel, spec["env_id"], limits=limits) as env:
        asyncio.run(
            evaluate(
                spec["env_id"],
                model=spec["model"],
                base_url=spec["base_url"],
                out=out,
                num_tasks=spec.get("num_tasks"),
                rollouts=int(spec.get("rollouts", 1)),
                seed=int(spec.get("seed", 0)),
                options=options,
                started=(env, spec["content_hash"]),
            )
        )


def main(argv: list[str]) -> int:
    wheel, wheel_name, spec_path, out = Path(argv[0]), argv[1], Path(argv[2]), Path(argv[3])
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    staged = out / "wheel" / Path(wheel_name).name  # the unpacker reads the wheel's real name
    staged.parent.mkdir(parents=True)
    staged.write_bytes(wheel.read_bytes())
    error: str | None = None
    try:
        run_eval(staged, spec, out / "run", wall_s=float(spec.get("wall_s", 3600.0)))
    except Exception as exc:  # the outcome says what broke; the worker records it
        error = f"{type(exc).__name__}: {exc}"
    (out / "outcome.json").write_text(json.dumps({"error": error}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
