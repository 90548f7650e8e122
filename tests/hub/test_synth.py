"""``verihub synth``: each check removes what it should, kept tasks carry their provenance, and a
failing endpoint leaves a whole report and the tasks kept so far."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

import hub.cli
from graders.exact import ExactGrader
from hub import SingleTurnEnv, Task
from hub.env.errors import ModelConfigError
from hub.env.types import Message, Usage
from hub.registry.entrypoints import load_environment
from hub.run.client import ClientOptions, OpenAIClient
from hub.run.completions import Completion
from hub.run.fake_server import FakeChatServer
from hub.train.synth import SynthConfig, synthesize, synthesize_with
from hub.train.synth_filters import NearDuplicates, load_tasks, parse_candidate, solver_for
from hub.train.synth_templates import check_fields, template_for

needs_datasketch = pytest.mark.skipif(find_spec("datasketch") is None, reason="pip install 'verihub[synth]'")
SUFFIX = " Reply with the final answer as: Answer: <integer>"
GSM8K_QUESTION = (
    "Janet\u2019s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins "
    "for her friends every day with four. She sells the remainder at the farmers' market daily for $2 "
    "per fresh duck egg. How much in dollars does she make every day at the farmers' market?"
)


def _task(prompt: str, answer: str) -> str:
    return json.dumps({"prompt": prompt, "answer": answer})


def _fields(expression: str) -> str:
    return json.dumps({"expression": expression})


ARITH_REPLIES = [
    "Here is one: " + _task("Compute 987 + 654." + SUFFIX, "1641"),  # kept (prose around the JSON)
    '{"prompt": "Compute 3 + 4.", "answer": ',  # malformed
    _task("Compute 987 + 654." + SUFFIX, "1641"),  # duplicate of the first
    _task(GSM8K_QUESTION, "18"),  # copied from the gsm8k test set
    _task("Compute (123 + 456) * 7." + SUFFIX, "4000"),  # wrong: the solver says 4053
    _task("Compute (17 + 25) * 3." + SUFFIX, "126"),  # kept
]


def _generator(
    replies: list[str], solve: dict[str, str] | None = None, seen: list[dict[str, Any]] | None = None
) -> Any:
    queue: Iterator[str] = iter(replies)

    def respond(request: dict[str, Any]) -> str:
        first, last = request["messages"][0]["content"], request["messages"][-1]["content"]
        if first.startswith("You write new tasks"):
            if seen is not None:
                seen.append(request)
            return next(queue, "no more")
        return next((answer for key, answer in (solve or {}).items() if key in last), "Answer: 42")

    return respond


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    bench = tmp_path / "data" / "gsm8k"
    bench.mkdir(parents=True)
    (bench / "test.jsonl").write_text(json.dumps({"question": GSM8K_QUESTION, "answer": "#### 18"}) + "\n")
    return tmp_path / "data"


def _client(server: FakeChatServer) -> OpenAIClient:
    return OpenAIClient(ClientOptions(base_url=server.base_url, model="fake", max_retries=0, timeout_s=5))


@needs_datasketch
async def test_each_check_removes_its_candidates_and_kept_tasks_carry_provenance(
    tmp_path: Path, data_dir: Path
) -> None:
    env = load_environment("arith")
    config = SynthConfig(n=len(ARITH_REPLIES), data_dir=data_dir, reference_tasks=200, form="free")
    async with FakeChatServer(responder=_generator(ARITH_REPLIES)) as server, _client(server) as client:
        report = await synthesize_with(env, client, tmp_path / "out", config, generator_name="fake-gen")
    assert report.stopped is None and report.candidates == 6 and report.kept == 2
    assert report.removed == {"parse": 1, "duplicate": 1, "contamination": 1, "verify": 1, "calibration": 0}
    assert report.detail == {"verify/wrong": 1}
    assert report.verifier == "solver:arith" and report.reference["gsm8k"] == 1
    saved = json.loads((tmp_path / "out" / "report.json").read_text())
    assert saved["removed"] == report.removed and saved["config"]["ngram"] == 13
    tasks = load_tasks(tmp_path / "out" / "tasks.jsonl")
    assert [t.answer for t in tasks] == ["1641", "126"]
    prov = tasks[0].metadata["synth"]
    assert prov["generator"] == "fake-gen" and len(prov["prompt_sha256"]) == 64
    assert prov["filters"]["verify"] == {"method": "solver", "reference": "1641"}
    assert prov["filters"]["duplicate"]["threshold"] == 0.8 and prov["filters"]["calibration"] == "skipped"
    assert prov["run_seed"] == 0 and prov["seed"] != tasks[1].metadata["synth"]["seed"]
    # the kept tasks serve as a split and grade as arith tasks do
    synth_env = SingleTurnEnv(id="arith-synth", tasks={"synth": tasks}, grader=ExactGrader(kind="integer"))
    assert [t.id for t in synth_env.tasks("synth")] == [t.id for t in tasks]


@needs_datasketch
async def test_the_arith_form_asks_for_fields_under_a_schema_and_the_solver_answers(
    tmp_path: Path, data_dir: Path
) -> None:
    env = load_environment("arith")
    seed_expression = next(iter(env.tasks("train"))).metadata["expression"]
    replies = [
        "sure: " + _fields("17 * 23"),  # kept: the solver answers 391
        _fields("__import__('os')"),  # not in the schema's pattern
        _fields(seed_expression),  # one of the environment's own tasks
        _fields("17 * 23"),  # a copy of the first
        _fields("7 / 2"),  # well-formed but not an exact quotient: the solver cannot answer it
        json.dumps({"expression": "(12 + 5) * 3", "answer": "nonsense"}),  # extra fields are ignored
    ]
    seen: list[dict[str, Any]] = []
    config = SynthConfig(n=len(replies), data_dir=data_dir, reference_tasks=200, shots=2)
    async with FakeChatServer(responder=_generator(replies, seen=seen)) as server, _client(server) as client:
        report = await synthesize_with(env, client, tmp_path / "out", config, generator_name="fake-gen")
    assert report.template == "arith" and report.constrained and report.notes == []
    assert report.removed == {"parse": 1, "duplicate": 2, "contamination": 0, "verify": 1, "calibration": 0}
    assert report.detail == {"verify/unsolved": 1}
    tasks = load_tasks(tmp_path / "out" / "tasks.jsonl")
    assert [(t.prompt, t.answer) for t in tasks] == [
        ("Compute 17 * 23." + SUFFIX, "391"),
        ("Compute (12 + 5) * 3." + SUFFIX, "51"),
    ]
    prov = tasks[0].metadata["synth"]
    assert prov["fields"] == {"expression": "17 * 23"} and prov["template"] == "arith"
    assert prov["filters"]["parse"] == {"pass": True, "constrained": True}
    assert prov["filters"]["verify"] == {"method": "solver", "reference": "391"}
    # every request carries the schema; the shown tasks are earlier turns of the chat
    schema = seen[0]["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["expression"] and len(seen) == len(replies)
    roles = [m["role"] for m in seen[0]["messages"]]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    assert json.loads(seen[0]["messages"][2]["content"]).keys() == {"expression"}


@needs_datasketch
async def test_the_textops_form_makes_questions_the_solver_answers(tmp_path: Path, data_dir: Path) -> None:
    env = load_environment("textops")
    replies = [
        json.dumps({"operation": "count", "word": "banana", "letter": "a"}),
        json.dumps({"operation": "reverse", "word": "kolam", "letter": "k"}),
        json.dumps({"operation": "shout", "word": "kolam", "letter": "k"}),  # not an operation
        json.dumps({"operation": "reverse", "word": "kolam", "letter": "x"}),  # the second again (no letter)
    ]
    config = SynthConfig(n=len(replies), data_dir=data_dir, reference_tasks=100)
    async with FakeChatServer(responder=_generator(replies)) as server, _client(server) as client:
        report = await synthesize_with(env, client, tmp_path / "out", config, generator_name="fake-gen")
    assert report.removed["parse"] == 1 and report.removed["duplicate"] == 1 and report.kept == 2
    count, reverse = load_tasks(tmp_path / "out" / "tasks.jsonl")
    assert count.answer == "3" and count.metadata["kind"] == "integer"
    assert reverse.answer == "malok" and str(reverse.prompt).startswith("Write the word 'kolam' backwards.")


class _RefusesSchemas:
    """A generator whose endpoint refuses ``response_format`` (as some servers do) and otherwise
    replies from a script."""

    def __init__(self, replies: list[str], refuse: tuple[str, ...] = ("json_schema", "json_object")) -> None:
        self.replies = iter(replies)
        self.refuse = refuse
        self.formats: list[dict[str, Any] | None] = []

    async def chat(
        self,
        messages: Any,
        *,
        sampling: Any,
        tools: Any = None,
        seed: int | None = None,
        response_format: dict[str, Any] | None = None,
        logprobs: bool = False,
    ) -> Completion:
        self.formats.append(response_format)
        if response_format is not None and response_format["type"] in self.refuse:
            raise ModelConfigError("HTTP 400: response_format is not supported")
        reply = Message(role="assistant", content=next(self.replies))
        return Completion(message=reply, usage=Usage(), finish_reason="stop")


@needs_datasketch
async def test_an_endpoint_refusing_response_format_is_asked_without_it(
    tmp_path: Path, data_dir: Path
) -> None:
    env = load_environment("arith")
    generator = _RefusesSchemas(["Here: " + _fields("31 * 3"), "no json at all", _fields("44 - 4")])
    config = SynthConfig(n=3, data_dir=data_dir, reference_tasks=100)
    report = await synthesize_with(env, generator, tmp_path / "out", config, generator_name="fake-gen")
    assert report.stopped is None and report.kept == 2 and report.removed["parse"] == 1
    assert not report.constrained and len(report.notes) == 1 and "response_format" in report.notes[0]
    kinds = [f and f["type"] for f in generator.formats]
    assert kinds == ["json_schema", "json_object", None, None, None]
    assert report.response_format == ""
    first = load_tasks(tmp_path / "out" / "tasks.jsonl")[0]
    assert first.answer == "93" and first.metadata["synth"]["filters"]["parse"]["constrained"] is False


@needs_datasketch
async def test_a_refused_json_schema_is_sent_as_a_json_object_instead(tmp_path: Path, data_dir: Path) -> None:
    env = load_environment("arith")
    generator = _RefusesSchemas([_fields("31 * 3"), _fields("44 - 4")], refuse=("json_schema",))
    config = SynthConfig(n=2, data_dir=data_dir, reference_tasks=100)
    report = await synthesize_with(env, generator, tmp_path / "out", config, generator_name="fake-gen")
    assert report.kept == 2 and report.constrained and report.response_format == "json_object"
    assert [f and f["type"] for f in generator.formats] == ["json_schema", "json_object", "json_object"]
    assert len(report.notes) == 1 and "sent json_object since" in report.notes[0]
    assert generator.formats[1] is not None and generator.formats[1]["schema"]["required"] == ["expression"]


def test_fields_are_checked_against_the_schema() -> None:
    schema = template_for(load_environment("textops")).schema
    good = {"operation": "count", "word": "banana", "letter": "a"}
    assert check_fields(schema, good) == good
    assert check_fields(schema, {**good, "extra": 1}) == good
    for bad in (
        {**good, "operation": "eval"},
        {**good, "word": "ba nana"},
        {**good, "letter": "ab"},
        {"operation": "count", "word": "banana"},
        {**good, "word": ["banana"]},
        "banana",
    ):
        assert check_fields(schema, bad) is None
    free = template_for(load_environment("arith"), "free").schema
    assert check_fields(free, {"prompt": "Compute 1 + 1.", "answer": 2}) == {
        "prompt": "Compute 1 + 1.",
        "answer": "2",
    }
    assert check_fields(free, {"prompt": "x", "answer": True}) is None


@needs_datasketch
async def test_without_a_solver_k_model_solutions_must_agree(tmp_path: Path, data_dir: Path) -> None:
    seeds = [
        Task(id=f"s{i}", prompt=f"What is the capital of {c}?", answer=a)
        for i, (c, a) in enumerate([("France", "Paris"), ("Spain", "Madrid"), ("Peru", "Lima")])
    ]
    env = SingleTurnEnv(id="capitals", tasks={"train": seeds}, grader=ExactGrader(kind="text"))
    assert solver_for(env) is None
    replies = [
        _task("What is the capital of Japan?", "Tokyo"),
        _task("What is the capital of Italy?", "Milan"),
    ]
    solve = {"Japan": "Answer: Tokyo", "Italy": "Answer: Rome"}
    config = SynthConfig(n=2, k=3, agree=2, data_dir=data_dir)
    async with FakeChatServer(responder=_generator(replies, solve)) as server, _client(server) as client:
        report = await synthesize_with(env, client, tmp_path / "out", config, generator_name="fake-gen")
    assert report.kept == 1 and report.removed["verify"] == 1
    assert report.verifier == "agreement: >= 2 of 3 model solutions pass"
    (task,) = load_tasks(tmp_path / "out" / "tasks.jsonl")
    assert task.answer == "Tokyo"
    assert task.metadata["synth"]["filters"]["verify"] == {
        "method": "agreement",
        "k": 3,
        "agree": 2,
        "passed": 3,
    }


@needs_datasketch
async def test_calibration_removes_tasks_outside_the_band(tmp_path: Path, data_dir: Path) -> None:
    env = load_environment("arith")
    replies = [_fields("987 + 654"), _fields("20 + 22")]
    config = SynthConfig(n=2, data_dir=data_dir, calibrate_model="fake-cal", rollouts=4, band=(0.1, 0.9))
    # the calibration model always answers 42: 0/4 on the first task, 4/4 on the second, both outside
    async with FakeChatServer(responder=_generator(replies)) as server, _client(server) as client:
        report = await synthesize_with(
            env, client, tmp_path / "out", config, generator_name="fake-gen", calibrator=client
        )
    assert report.kept == 0 and report.removed["calibration"] == 2


@needs_datasketch
async def test_a_failing_endpoint_mid_run_keeps_the_tasks_so_far(tmp_path: Path, data_dir: Path) -> None:
    env = load_environment("arith")
    replies = [_fields("987 + 654"), _fields("(17 + 25) * 3")]
    config = SynthConfig(n=5, data_dir=data_dir)
    schedule = ["ok", "ok", "500", "500", "500"]
    async with (
        FakeChatServer(responder=_generator(replies), schedule=schedule) as server,
        _client(server) as c,
    ):
        report = await synthesize_with(env, c, tmp_path / "out", config, generator_name="fake-gen")
    assert report.stopped and report.candidates == 2 and report.kept == 2
    assert len(load_tasks(tmp_path / "out" / "tasks.jsonl")) == 2
    assert json.loads((tmp_path / "out" / "report.json").read_text())["stopped"] == report.stopped
    assert not list((tmp_path / "out").glob(".*.tmp"))


def test_an_unreachable_endpoint_ends_in_one_line_with_a_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = [
        "synth",
        "arith",
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--n",
        "3",
        "--out",
        str(out),
        "--max-retries",
        "0",
        "--timeout",
        "2",
    ]
    with pytest.raises(SystemExit) as exc:
        hub.cli.main(argv)
    assert exc.value.code == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "0 kept" in lines[0]
    report = json.loads((out / "report.json").read_text())
    assert report["stopped"] and report["kept"] == 0 and report["candidates"] == 0
    assert (out / "tasks.jsonl").read_text() == ""


@needs_datasketch
def test_the_command_writes_tasks_and_report(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VERIHUB_SHARED_DATA", str(data_dir))
    loop = asyncio.new_event_loop()
    server = FakeChatServer(responder=_generator(ARITH_REPLIES))
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(10)
    out = tmp_path / "out"
    try:
        with pytest.raises(SystemExit) as exc:
            hub.cli.main(["synth", "arith", "--model", "gen", "--base-url", server.base_url, "--n", "6",
                          "--out", str(out), "--form", "free"])  # fmt: skip
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
    assert exc.value.code == 0
    assert "kept 2 of 6 candidates" in capsys.readouterr().out
    report = json.loads((out / "report.json").read_text())
    assert report["removed"]["contamination"] == 1 and report["generator"] == "gen"
    assert [t.metadata["synth"]["generator"] for t in load_tasks(out / "tasks.jsonl")] == ["gen", "gen"]


def test_parse_candidate_validates_or_refuses() -> None:
    task = parse_candidate('ok: {"prompt": "Compute 1 + 1.", "answer": 2}', "c0")
    assert task is not None and task.answer == "2" and task.id == "c0"
    two = '{"task": "x"} then {"prompt": "Compute 2 + 2.", "answer": "4"} and {"prompt": "y", "answer": "1"}'
    again = parse_candidate(two, "c2")
    assert again is not None and again.prompt == "Compute 2 + 2."
    for bad in (
        "no json",
        '{"prompt": "", "answer": "1"}',
        '{"prompt": "x", "answer": true}',
        '["prompt", "answer"]',
        '{"prompt": "x"}',
        '{"prompt": 3, "answer": "1"}',
    ):
        assert parse_candidate(bad, "c1") is None


@pytest.mark.parametrize("env_id", ["arith", "textops"])
def test_the_solvers_reproduce_the_environments_answers(env_id: str) -> None:
    env = load_environment(env_id)
    solve = solver_for(env)
    assert solve is not None
    for i, task in enumerate(env.tasks("test")):
        if i >= 100:
            break
        solved = solve(str(task.prompt))
        assert solved is not None and solved[0] == task.answer, task.prompt
    assert solve("Compute 7 / 2." + SUFFIX) is None  # not an exact quotient
    assert solve("Compute __import__('os')." + SUFFIX) is None


@needs_datasketch
def test_near_duplicates_match_reworded_copies_only() -> None:
    index = NearDuplicates(0.8)
    index.add("a", "How many times does the letter 'a' appear in the word banana today?")
    assert index.match("How many times does the letter 'a' appear in the word banana today ?") == "a"
    assert index.match("Write the word 'kolam' backwards and then reverse the result twice.") is None


def _have_local_model() -> bool:
    try:
        from hub.run.local_model import local_model_path

        local_model_path("smollm2")
    except Exception:
        return False
    return True


@needs_datasketch
@pytest.mark.model
@pytest.mark.slow
@pytest.mark.skipif(not _have_local_model(), reason="embedded model not installed (bash scripts/install.sh)")
async def test_the_embedded_model_runs_the_pipeline_end_to_end(tmp_path: Path) -> None:
    config = SynthConfig(n=4, max_tokens=96, temperature=0.7, reference_tasks=200)
    report = await synthesize("arith", model="local:smollm2", base_url=None, out=tmp_path, config=config)
    assert report.stopped is None and report.candidates == 4 and report.response_format == "json_schema"
    assert report.kept + sum(report.removed.values()) == 4
    assert report.kept >= 1  # 48 of 60 with these settings; the sampling is seeded
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["kept"] == report.kept and saved["removed"] == report.removed
    tasks = load_tasks(tmp_path / "tasks.jsonl")
    assert len(tasks) == report.kept
    solve = solver_for(load_environment("arith"))
    assert solve is not None
    for task in tasks:
        prov = task.metadata["synth"]
        assert prov["generator"] == "local:smollm2" and prov["template"] == "arith"
        assert len(prov["prompt_sha256"]) == 64 and len(prov["seed_tasks"]) == config.shots
        assert set(prov["filters"]) == {"parse", "duplicate", "contamination", "verify", "calibration"}
        assert task.prompt == f"Compute {prov['fields']['expression']}." + SUFFIX
        solved = solve(str(task.prompt))
        assert solved is not None and solved[0] == task.answer == prov["filters"]["verify"]["reference"]
