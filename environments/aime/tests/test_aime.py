"""aime: the shared math-environment contract (hub.review.env_tests) plus package-specific checks."""

from __future__ import annotations

import pytest
from verihub_aime import ENV_VAR, load_environment

from hub.env.types import Task
from hub.review.env_tests import MathDatasetEnvContract


class TestAime(MathDatasetEnvContract):
    env_id = "aime"
    data_folder = "aime24"
    size = 30
    env_var = ENV_VAR
    load = staticmethod(load_environment)


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return list(TestAime().env().tasks("test"))


def test_ids_and_metadata_come_from_the_problem_url(tasks: list[Task]) -> None:
    assert tasks[0].id == "aime-2024-I-01"
    assert {t.metadata["contest"] for t in tasks} == {"AIME I", "AIME II"}
    assert all(t.metadata["year"] == 2024 for t in tasks)
