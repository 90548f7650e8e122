"""``verihub results set``: a run id that starts with '-' reaches the hub after ``--``."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

import hub.cli.results  # noqa: F401  (registers the command)
from hub.cli.app import app


def _answer(path: str) -> dict[str, Any]:
    run_id = path.rsplit("/", 1)[-1]
    return {"id": run_id, "ref": "alice/arith", "version": "0.1.0", "private": True, "label": ""}


@pytest.fixture
def requests(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, str]]]:
    import hub.client

    sent: list[tuple[str, dict[str, str]]] = []

    def fake_request(url: str, path: str, **kw: Any) -> dict[str, Any]:
        sent.append((path, kw["query"]))
        return _answer(path)

    monkeypatch.setattr(hub.client, "hub_request", fake_request)
    return sent


HUB = ["--hub", "http://127.0.0.1:9", "--token", "vh_test"]


def test_an_id_with_a_leading_dash_goes_last_after_double_dash(requests: list[Any]) -> None:
    result = CliRunner().invoke(app, ["results", "set", "--private", *HUB, "--", "-Ab3"])
    assert result.exit_code == 0, result.output
    assert requests == [("/api/v1/results/-Ab3", {"public": "0"})]
    assert "run -Ab3 of alice/arith@0.1.0: private" in result.output


def test_without_double_dash_it_reads_as_an_option_and_the_help_says_what_to_do(requests: list[Any]) -> None:
    runner = CliRunner()
    refused = runner.invoke(app, ["results", "set", "-Ab3", "--private", *HUB])
    assert refused.exit_code == 2 and requests == []
    assert "--private -- -ID" in " ".join(runner.invoke(app, ["results", "set", "--help"]).output.split())
