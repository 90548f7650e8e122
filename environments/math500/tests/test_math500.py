"""math500: the shared math-environment contract (hub.review.env_tests) plus package-specific checks."""

from __future__ import annotations

import pytest
from verihub_math500 import ENV_VAR, load_environment

from hub.env.types import Task
from hub.review.env_tests import MathDatasetEnvContract


class TestMath500(MathDatasetEnvContract):
    env_id = "math500"
    data_folder = "math500"
    size = 500
    env_var = ENV_VAR
    load = staticmethod(load_environment)


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return list(TestMath500().env().tasks("test"))


def test_metadata_carries_subject_and_level(tasks: list[Task]) -> None:
    subjects = {t.metadata["subject"] for t in tasks}
    assert "Precalculus" in subjects and len(subjects) == 7
    assert {t.metadata["level"] for t in tasks} == {1, 2, 3, 4, 5}
    assert tasks[0].id == "math500-test-precalculus-807"
