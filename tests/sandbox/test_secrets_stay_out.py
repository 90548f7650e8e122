"""Nothing of the host's secrets reaches a sandbox, its command line, or a report.

Planted: a database URL with a password and a token in variables of the kind the hub server
sets (``VERIHUB_HUB_DB``, ``VERIHUB_*_TOKEN``), and a Hugging Face home with a token file. Each
defence has its own test: the sandbox's environment (an allow-list), bubblewrap's command line
(``--args FD``), and the report's redaction (which must hold even when a value got in).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from hub.review.check import CheckOptions, CheckReport, Limits, check
from hub.review.check.runner import stage_path, start_checked
from hub.sandbox import run, unavailable_reason
from hub.sandbox.redact import MASK, clean, host_secrets, redact
from hub.sandbox.remote import PASSED_VARIABLES, sandbox_env
from hub.sandbox.stage import STAGE_PREFIX, make_writable

SANDBOX = pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
HOSTILE = Path(__file__).parent / "hostile"
PASSWORD = "pw-Planted-8c1e5"
DB_URL = f"postgresql://verihub:{PASSWORD}@db.internal:5432/hub"
TOKEN = "vh_planted_0123456789abcdefXYZ"
HF_TOKEN = "hf_PlantedTokenAbcdefghijklmnop"
FAST = CheckOptions(num_tasks=10, gold_tasks=8, probe_tasks=2, grade_timeout_s=2.0, limits=Limits(wall_s=90))


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    hf = tmp_path / "hf"
    hf.mkdir()
    (hf / "token").write_text(HF_TOKEN)
    monkeypatch.setenv("VERIHUB_HUB_DB", DB_URL)
    monkeypatch.setenv("VERIHUB_HUB_DATA", str(tmp_path / "hubdata"))
    monkeypatch.setenv("VERIHUB_PUSH_TOKEN", TOKEN)
    monkeypatch.setenv("VERIHUB_HUB_CACHE_DIR", str(hf))  # a *_DIR the old rule bound
    monkeypatch.setenv("HF_HOME", str(hf))
    return [PASSWORD, DB_URL, TOKEN, HF_TOKEN, str(tmp_path / "hubdata")]


def test_sandbox_environment_is_an_allow_list(planted: list[str]) -> None:
    env = sandbox_env([])
    allowed = {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE"}
    allowed |= {
        "PYTHONPATH",
        "HF_HUB_OFFLINE",
        "HF_DATASETS_OFFLINE",
        "VERIHUB_SANDBOX_READ",
        *PASSED_VARIABLES,
    }
    assert set(env) <= allowed, set(env) - allowed
    text = json.dumps(env)
    assert not [s for s in planted if s in text]


@pytest.mark.slow
def test_report_text_is_redacted_and_capped(planted: list[str]) -> None:
    """Even when a secret got into the sandbox, the report does not repeat it."""
    report = CheckReport(target="x")
    leak = f"Env(db={DB_URL}, t={TOKEN}, hf={HF_TOKEN}, url=https://u:{PASSWORD}@x.org/) " + "z" * 50_000
    report.add("loads", "fail", leak, [leak, "\x1b[2Jclear"])
    text = report.to_text() + report.model_dump_json()
    assert not [s for s in planted if s in text], text[:500]
    assert MASK in text
    assert len(report.results[0].reason) <= 1000 and all(len(d) <= 500 for d in report.results[0].details)
    assert "\x1b" not in report.results[0].details[1]


def test_redact_finds_secret_names_and_url_passwords() -> None:
    env = {"MY_API_KEY": "k-123456789", "DATABASE_URL": "mysql://a:s3cr3tpass@h/d", "PLAIN": "hello-world"}
    secrets = host_secrets(env)
    assert "k-123456789" in secrets and "s3cr3tpass" in secrets and "hello-world" not in secrets
    out = redact("k-123456789 s3cr3tpass hello-world", secrets)
    assert out == f"{MASK} {MASK} hello-world"
    assert clean("a" * 10, 5, []) == "aaaa…"


@SANDBOX
def test_bubblewrap_command_line_carries_no_values(tmp_path: Path) -> None:
    code = "print(open('/proc/1/cmdline', 'rb').read().decode('utf-8', 'replace'))"
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PLANTED": PASSWORD}
    proc = run([sys.executable, "-c", code], env=env)
    assert proc.returncode == 0, proc.stderr
    assert "--args" in proc.stdout  # the init's command line is there to read
    assert PASSWORD not in proc.stdout and "--setenv" not in proc.stdout and "--ro-bind" not in proc.stdout


@SANDBOX
@pytest.mark.sandbox
def test_environment_server_sees_no_planted_value(planted: list[str], tmp_path: Path) -> None:
    """The raw repr, straight from the sandbox before any redaction, holds none of them."""
    import tempfile

    work = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX))
    try:
        stage = stage_path((HOSTILE / "leaky").resolve(), work, FAST, CheckReport(target="x"))
        assert stage is not None
        env = start_checked(stage, "hostile_leaky", FAST)
        try:
            raw = str(env.info["repr"])
        finally:
            env.close()
    finally:
        make_writable(work)
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    assert raw.startswith("Leaky(")
    assert not [s for s in planted if s in raw], raw


@SANDBOX
@pytest.mark.sandbox
@pytest.mark.slow
def test_check_report_of_a_leaky_package_holds_no_secret(planted: list[str]) -> None:
    report = check(str(HOSTILE / "leaky"), options=replace(FAST))
    text = report.to_text() + report.model_dump_json()
    assert report.result("loads") is not None and "Leaky(" in text
    assert not [s for s in planted if s in text], text


def test_review_problems_are_redacted(
    planted: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A regrade's error quotes the package; the review's problems do not repeat a secret."""
    from hub.review import verify

    def leaky(bundle: object, **_kw: object) -> verify.Verification:
        return verify.Verification(bundle=tmp_path, problems=[f"regrading failed: {DB_URL} {TOKEN}"])

    monkeypatch.setattr(verify, "_verify", leaky)
    found = verify.verify_submission(tmp_path)
    assert found.problems and MASK in found.problems[0]
    assert not [s for s in planted if s in found.problems[0]]
