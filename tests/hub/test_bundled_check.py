"""Every bundled environment passes the project's own reviewer (`verihub check`), sandboxed, on
the shared test data: what the project asks of community authors it meets itself."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hub.review.check import CheckOptions, check
from hub.review.testing import shared_data_dir

REPO = Path(__file__).resolve().parents[2]
DATA = shared_data_dir(REPO)

# environment -> its local data file under the shared data (None: no download needed)
BUNDLED: dict[str, str | None] = {
    "arith": None,
    "textops": None,
    "gsm8k": "gsm8k/test.jsonl",
    "math500": "math500/test.jsonl",
    "aime": "aime24/test.jsonl",
    "amc": "amc23/test.jsonl",
    "nq_open": "nq_open/test.jsonl",
    "ifeval": "ifeval/input_data.jsonl",
    "coq_core": None,
    "support_desk": None,
}


def test_every_bundled_environment_is_listed_here() -> None:
    """A new environment must be added to BUNDLED (or to the documented exceptions below)."""
    exceptions = {"lean_core", "rubric_demo"}
    folders = {p.name for p in (REPO / "environments").iterdir() if (p / "pyproject.toml").is_file()}
    assert folders == set(BUNDLED) | exceptions


@pytest.mark.slow
@pytest.mark.parametrize("env_id", sorted(BUNDLED))
def test_bundled_environment_passes_check(env_id: str) -> None:
    if env_id == "coq_core" and shutil.which("coqc") is None:
        pytest.skip("coqc not on PATH: apt-get install coq")
    data = BUNDLED[env_id]
    options = CheckOptions(
        env_args={} if data is None else {"path": str(DATA / data)},
        num_tasks=20,
        gold_tasks=40,
        probe_tasks=4,
        allow_read=(str(DATA),),
    )
    report = check(str(REPO / "environments" / env_id), options=options)
    assert report.passed, report.to_text()


# Not checked here, with the reason:
# - lean_core needs a Lean toolchain to load its checker (none installs on these machines; its
#   protocol handling is tested against recorded Lean output in tests/graders).
# - rubric_demo grades with an LLM judge, which the sandbox's closed network cannot reach; its
#   deterministic checks and judge hardening are tested in tests/graders/test_rubric_*.py.
