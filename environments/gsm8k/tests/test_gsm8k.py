"""gsm8k: the shared math-environment contract (hub.review.env_tests) plus package-specific checks."""

from __future__ import annotations

import pytest
from verihub_gsm8k import ENV_VAR, load_environment

from hub.review.env_tests import MathDatasetEnvContract


class TestGsm8k(MathDatasetEnvContract):
    env_id = "gsm8k"
    data_folder = "gsm8k"
    size = 1319
    env_var = ENV_VAR
    load = staticmethod(load_environment)


def test_reference_answer_is_the_number_after_the_hashes() -> None:
    from verihub_gsm8k import reference_answer

    assert reference_answer("work <<1+1=2>>\n#### 1,234") == "1234"
    with pytest.raises(ValueError):
        reference_answer("no hashes")
    with pytest.raises(ValueError):
        load_environment(path=TestGsm8k().data_dir(), split="validation")
