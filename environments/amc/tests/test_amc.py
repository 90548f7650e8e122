"""amc: the shared math-environment contract (hub.review.env_tests) plus package-specific checks."""

from __future__ import annotations

import pytest
from verihub_amc import ENV_VAR, load_environment

from hub.env.types import Task
from hub.review.env_tests import MathDatasetEnvContract


class TestAmc(MathDatasetEnvContract):
    env_id = "amc"
    data_folder = "amc23"
    size = 40
    env_var = ENV_VAR
    load = staticmethod(load_environment)


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return list(TestAmc().env().tasks("test"))


def test_float_answers_become_integers_and_ids_come_from_urls(tasks: list[Task]) -> None:
    from verihub_amc import reference_answer

    assert reference_answer(27.0) == "27" and reference_answer(-1.0) == "-1"
    assert all("." not in t.answer for t in tasks)
    assert tasks[0].id == "amc-2023-12A-01"
    assert {t.metadata["contest"] for t in tasks} == {"AMC 12A", "AMC 12B"}
