"""A slow host's reviews get proportionally longer time limits, measured once at worker start."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from hub.review.check import CheckOptions
from hub.server import worker
from hub.server.core.config import HubConfig
from hub.server.reviews import hostspeed
from hub.server.reviews.hostspeed import MAX_SCALE, REFERENCE_CPU_S, calibrate, scale_for
from hub.server.reviews.review_child import FAST_CHECK, scaled


@pytest.mark.parametrize(
    ("cpu_s", "expected"),
    [
        (REFERENCE_CPU_S, 1.0),
        (REFERENCE_CPU_S / 3, 1.0),  # a faster host keeps the ordinary limits
        (REFERENCE_CPU_S * 2, 2.0),
        (REFERENCE_CPU_S * 1.5, 1.5),
        (REFERENCE_CPU_S * 50, MAX_SCALE),  # capped
        (0.0, 1.0),
        (-1.0, 1.0),
    ],
)
def test_scale_for(cpu_s: float, expected: float) -> None:
    assert scale_for(cpu_s) == pytest.approx(expected)


def test_calibrate_measures_the_workload(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([0.0, 0.3, 1.0, 1.3, 2.0, 2.3])  # three rounds of 0.3 CPU seconds each
    monkeypatch.setattr(hostspeed.time, "process_time", lambda: next(clock))
    speed = calibrate(rounds=3)
    assert speed.workload_cpu_s == pytest.approx(0.3)
    assert speed.scale == scale_for(0.3)
    assert "x" + f"{speed.scale:.2f}" in str(speed)


def test_calibrate_on_this_host_is_within_bounds() -> None:
    speed = calibrate(rounds=1)
    assert speed.workload_cpu_s > 0
    assert 1.0 <= speed.scale <= MAX_SCALE


def test_scaled_multiplies_every_time_limit() -> None:
    out = scaled(FAST_CHECK, 2.5)
    assert out.limits.wall_s == pytest.approx(FAST_CHECK.limits.wall_s * 2.5)
    assert out.limits.cpu_s >= FAST_CHECK.limits.cpu_s * 2.5
    assert out.grade_timeout_s == pytest.approx(FAST_CHECK.grade_timeout_s * 2.5)
    assert out.limits.memory_mb == FAST_CHECK.limits.memory_mb  # only time is scaled
    assert out.num_tasks == FAST_CHECK.num_tasks
    assert scaled(CheckOptions(), 1.0) == CheckOptions()


def test_worker_uses_the_operators_factor_else_calibrates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="verihub.worker")
    assert worker._time_scale(HubConfig(data=tmp_path, review_time_scale=2.0)) == 2.0
    monkeypatch.setattr(worker, "calibrate", lambda: hostspeed.HostSpeed(REFERENCE_CPU_S * 3, 3.0))
    assert worker._time_scale(HubConfig(data=tmp_path)) == 3.0
    assert "time limits x3.00" in caplog.text


def test_config_round_trips_the_factor_through_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = HubConfig(data=tmp_path, review_time_scale=1.5).to_env()
    assert env["VERIHUB_HUB_REVIEW_TIME_SCALE"] == "1.5"
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert HubConfig.from_env().review_time_scale == 1.5
    assert "VERIHUB_HUB_REVIEW_TIME_SCALE" not in HubConfig(data=tmp_path).to_env()
