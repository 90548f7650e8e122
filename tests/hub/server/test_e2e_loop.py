"""The whole loop, as people walk it, against a real ``verihub hub serve`` (its worker, the sandbox)
on SQLite and on PostgreSQL, through the real command line (each person a ``python -m hub``
process with their own HOME and config) and real HTTP (a cookie jar for the browser's part):

1. the admin makes invitations; alice signs up with one on ``/sign-up``, makes a push token on
   ``/settings`` (the secret read off the page) and logs in with it;
2. alice pushes arith's bundle (``push --wait``), follows it (``status``), turns it private and
   public again (``visibility``), and makes and pushes a new environment (``init``, ``push FOLDER
   --wait``: build, check and smoke run with the embedded model, then the hub's review);
3. alice evaluates it against a fake OpenAI-compatible model (``eval --push``) and reads the run's
   page and a rollout's transcript;
4. bob, invited as a reviewer, labels two rollouts and saves a corrected trajectory with the
   rollout pages' forms; the hub grades the copy in the sandbox;
5. carol pulls the labels, measures the grader on them (``fidelity``) and exports the corrected
   trajectory as SFT data, with its provenance;
6. a fresh virtualenv installs the reviewed version with ``pip install --index-url HUB/simple/``
   (``--no-deps``: verihub's own dependencies need an upstream, which test_upstream_live covers);
   alice then yanks it, and pip takes it only when pinned.

A step that breaks says which it was, with the tail of the hub's log.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.venvs import child_venv

REPO = Path(__file__).resolve().parents[3]
# the people have this checkout's verihub and arith (the pushed package) on their path
PATH = os.pathsep.join([str(REPO), str(REPO / "environments" / "arith")])
PASSWORD = "a long enough passphrase"
_CSRF = re.compile(r'name="csrf_token" value="([0-9a-f]+)"')
_TOKEN = re.compile(r'<pre id="new-token">(vh_[^<]+)</pre>')

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Hub:
    """A ``verihub hub serve`` process (own process group) on a data folder and a database."""

    data: Path
    db: str | None
    port: int = field(default_factory=_free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.data.parent / "serve.log"

    def where(self) -> list[str]:
        return ["--data", str(self.data), *(["--db", self.db] if self.db else [])]

    def start(self) -> None:
        cmd = [sys.executable, "-m", "hub", "hub", "serve", *self.where(), "--port", str(self.port)]
        cmd += ["--review-fast", "--lease-s", "5", *(["--review-worker"] if self.db else [])]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                cmd, env=_env(), stdout=log, stderr=log, start_new_session=True, cwd=self.data.parent
            )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"the hub exited ({self.proc.returncode})\n{self.tail()}")
            try:
                if httpx.get(self.url + "/simple/", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise AssertionError(f"the hub did not answer in 120 s\n{self.tail()}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=20)

    def tail(self, n: int = 40) -> str:
        lines = self.log.read_text(errors="replace").splitlines() if self.log.exists() else []
        return "--- hub log (last lines) ---\n" + "\n".join(lines[-n:])

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        """Failures inside say which step of the loop broke, with the hub's log tail."""
        try:
            yield
        except Exception as exc:
            raise AssertionError(f"step {name!r} failed: {exc}\n{self.tail()}") from exc


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERIHUB_HUB_")}
    env.update(PYTHONPATH=PATH, NO_COLOR="1", **extra)
    return env


@dataclass
class Person:
    """Someone at their own machine: their own HOME and verihub config."""

    name: str
    home: Path

    def env(self) -> dict[str, str]:
        return _env(HOME=str(self.home), VERIHUB_CONFIG=str(self.home / "config.toml"))

    def verihub(self, *args: str, stdin: str | None = None, timeout: float = 300) -> str:
        """``verihub ARGS`` as this person; its stdout and stderr, or an error saying what failed."""
        proc = subprocess.run(
            [sys.executable, "-m", "hub", *args],
            env=self.env(),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.home,
        )
        said = proc.stdout + proc.stderr
        assert proc.returncode == 0, f"{self.name}: verihub {' '.join(args)} -> {proc.returncode}\n{said}"
        return said


def _person(tmp_path: Path, name: str) -> Person:
    home = tmp_path / name
    home.mkdir()
    return Person(name, home)


def _secret(prefix: str, said: str) -> str:
    """The code or token starting with ``prefix`` that a command printed."""
    found = re.search(rf"\b{prefix}[A-Za-z0-9_-]+", said)
    assert found is not None, f"no {prefix}... in {said!r}"
    return found.group(0)


def _regraded(hub: Hub, run_id: str, timeout: float = 240) -> str:
    """The run's re-verification state once the worker is done with it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = str(httpx.get(f"{hub.url}/api/v1/results/{run_id}").json()["verify_state"])
        if state != "pending":
            return state
        time.sleep(0.5)
    raise AssertionError(f"run {run_id} was not re-graded in {timeout} s")


def _csrf(browser: httpx.Client, path: str) -> str:
    page = browser.get(path)
    assert page.status_code == 200, f"GET {path}: {page.status_code}"
    found = _CSRF.search(page.text)
    assert found is not None, f"no csrf_token on {path}"
    return found.group(1)


def _browser(hub: Hub) -> httpx.Client:
    """A browser: a cookie jar, redirects shown rather than followed."""
    return httpx.Client(base_url=hub.url, follow_redirects=False, timeout=30)


def _sign_up(browser: httpx.Client, name: str, invitation: str) -> None:
    """Sign up on the pages with ``invitation``, sign out and in again; the browser stays signed in."""
    form = {"name": name, "password": PASSWORD, "password2": PASSWORD, "invitation": invitation}
    r = browser.post("/sign-up", data={**form, "csrf_token": _csrf(browser, "/sign-up")})
    assert r.status_code == 303, f"sign-up: {r.status_code} {r.text[:500]}"
    signed_out = browser.post("/sign-out", data={"csrf_token": _csrf(browser, "/settings")})
    assert signed_out.status_code == 303 and browser.get("/settings").status_code == 303
    form = {"name": name, "password": PASSWORD, "next": "/settings"}
    r = browser.post("/sign-in", data={**form, "csrf_token": _csrf(browser, "/sign-in")})
    assert r.status_code == 303, f"sign-in: {r.status_code}"
    assert f"Settings of {name}" in browser.get("/settings").text


def _make_token(browser: httpx.Client) -> str:
    """A push token made on /settings, read off the page that shows it once."""
    refused = browser.post("/settings/tokens", data={"scope": "push", "csrf_token": "0" * 64})
    assert refused.status_code == 403  # a wrong CSRF token makes nothing
    made = browser.post(
        "/settings/tokens",
        data={"scope": "push", "expires_days": "30", "csrf_token": _csrf(browser, "/settings")},
    )
    assert made.status_code == 201, f"token form: {made.status_code}"
    token = _TOKEN.search(made.text)
    assert token is not None, "the new token is not on the page"
    assert token.group(1) not in browser.get("/settings").text  # shown once
    return html.unescape(token.group(1))


_ANSWERS = """
import itertools, json, sys
from hub.registry import load_environment
from hub.registry.entrypoints import package_hash
c = json.loads(sys.argv[1])
tasks = load_environment("arith", **c["env_args"]).tasks(c["split"], seed=c["seed"])
tasks = list(itertools.islice(tasks, int(sys.argv[2])))
print(json.dumps([package_hash("arith"), {t.messages(None)[-1].content: str(t.answer) for t in tasks}]))
"""


def _arith_answers(person: Person, config: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """The content hash of the arith ``person`` has, and its tasks' prompts and answers (the
    fake model's knowledge), read in that person's interpreter."""
    got = subprocess.run(
        [sys.executable, "-c", _ANSWERS, json.dumps(config), str(N_TASKS)],
        env=person.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert got.returncode == 0, got.stderr
    local, answers = json.loads(got.stdout)
    return str(local), dict(answers)


@contextmanager
def _fake_model(tasks: dict[str, str]) -> Iterator[str]:
    """A loopback OpenAI-compatible model that answers arith prompts right, except a prompt seen
    in ``tasks`` with an odd position, which it answers wrong."""
    from hub.run.fake_server import FakeChatServer

    order = list(tasks)

    def respond(request: dict[str, Any]) -> str:
        prompt = request["messages"][-1]["content"]
        answer = tasks.get(prompt)
        if answer is None or order.index(prompt) % 2:
            return "Answer: -1"
        return f"Answer: {answer}"

    ready, stop = threading.Event(), threading.Event()
    url: list[str] = []

    async def serve() -> None:
        async with FakeChatServer(responder=respond) as server:
            url.append(server.base_url)
            ready.set()
            while not stop.is_set():
                await asyncio.sleep(0.05)

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(30), "the fake model did not start"
    try:
        yield url[0]
    finally:
        stop.set()
        thread.join(timeout=10)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest) -> Iterator[str | None]:
    if request.param == "sqlite":
        yield None
        return
    from tests.hub.server.pg_cluster import pg_bin, postgres_cluster

    if pg_bin() is None:
        pytest.skip("needs PostgreSQL (Debian: apt-get install postgresql)")
    with postgres_cluster() as url:
        yield url


N_TASKS = 4


def test_the_whole_loop(database: str | None, arith_bundle: Any, tmp_path: Path) -> None:
    hub = Hub(tmp_path / "hub", database)
    admin = _person(tmp_path, "admin")
    alice, bob, carol = (_person(tmp_path, n) for n in ("alice", "bob", "carol"))
    if database:
        admin.verihub("hub", "migrate", *hub.where())
    try:
        hub.start()
        _walk(hub, admin, alice, bob, carol, arith_bundle, tmp_path)
    finally:
        hub.stop()


def _walk(
    hub: Hub,
    admin: Person,
    alice: Person,
    bob: Person,
    carol: Person,
    arith_bundle: Any,
    tmp_path: Path,
) -> None:
    with hub.step("1. invitation, sign-up, token, login"):
        code = _secret("vhi_", admin.verihub("hub", "invite", "create", *hub.where()))
        with _browser(hub) as browser:
            _sign_up(browser, "alice", code)
            token = _make_token(browser)
        said = alice.verihub("login", "--hub", hub.url, stdin=token + "\n")
        assert "logged in" in said and "alice" in said

    with hub.step("2. push --wait, status, visibility"):
        said = alice.verihub("push", str(arith_bundle.bundle), "--wait", timeout=400)
        assert "alice/arith@0.1.0" in said and "review passed" in said, said
        assert f"{hub.url}/alice/arith" in said  # the page's address
        said = alice.verihub("status", "alice/arith@0.1.0")
        assert "alice/arith@0.1.0: review passed" in said, said
        assert "alice/arith is private now" in alice.verihub("visibility", "alice/arith", "--private")
        assert httpx.get(f"{hub.url}/api/v1/envs/alice/arith").status_code == 404
        assert httpx.get(f"{hub.url}/alice/arith").status_code == 404
        alice.verihub("visibility", "alice/arith", "--public")
        assert httpx.get(f"{hub.url}/api/v1/envs/alice/arith").status_code == 200

    with hub.step("2b. init a new environment and push the folder"):
        folder = alice.home / "loopenv"
        alice.verihub("init", "loopenv", "--path", str(folder))
        said = alice.verihub("push", str(folder), "--wait", timeout=600)  # build, check, smoke run
        assert "alice/loopenv@0.1.0" in said and "review passed" in said, said

    with hub.step("3. eval --push against a fake model, run page, transcript"):
        published = httpx.get(f"{hub.url}/api/v1/envs/alice/arith/0.1.0").json()["content_hash"]
        config = json.loads((arith_bundle.bundle / "eval" / "config.json").read_text())
        config["seed"] = 7  # not the seed fidelity indexes generated tasks with: matched by prompt
        local, answers = _arith_answers(alice, config)
        assert local == published, "alice's arith is not the package she pushed"
        with _fake_model(answers) as model_url:
            said = alice.verihub(
                "eval", "arith", "-m", "fake-solver", "--base-url", model_url, "--split", config["split"],
                "--seed", str(config["seed"]), "-n", str(N_TASKS), "-r", "1", "--out", str(tmp_path / "run"),
                "--no-progress", "--push", "--public", timeout=300,
            )  # fmt: skip
        assert "recorded, under alice, public" in said, said
        runs = httpx.get(f"{hub.url}/api/v1/envs/alice/arith/results").json()
        assert [r["model"] for r in runs] == ["fake-solver"], runs
        run_id = runs[0]["id"]
        run_view = httpx.get(f"{hub.url}/runs/{run_id}")
        assert run_view.status_code == 200 and "fake-solver" in run_view.text
        assert f"/runs/{run_id}/rollouts/0" in run_view.text  # the rollouts open from the run's page
        rollouts = [httpx.get(f"{hub.url}/runs/{run_id}/rollouts/{i}.json").json() for i in range(N_TASKS)]
        right = next(i for i, r in enumerate(rollouts) if r["grade"]["passed"])
        wrong = next(i for i, r in enumerate(rollouts) if not r["grade"]["passed"])
        shown = html.unescape(httpx.get(f"{hub.url}/runs/{run_id}/rollouts/{wrong}").text)
        prompt = rollouts[wrong]["messages"][-2]["content"]
        assert prompt in shown and "Answer: -1" in shown  # the transcript: the task and the reply

    with hub.step("4. a reviewer labels and corrects on the rollout pages"):
        code = _secret("vhi_", admin.verihub("hub", "invite", "create", "--reviewer", *hub.where()))
        with _browser(hub) as browser:
            _sign_up(browser, "bob", code)
            for index, value in ((wrong, "incorrect"), (right, "correct")):
                page = f"/runs/{run_id}/rollouts/{index}"
                form = {"value": value, "note": "checked", "csrf_token": _csrf(browser, page)}
                r = browser.post(f"{page}/label", data=form)
                assert r.status_code == 303, f"label form: {r.status_code} {r.text[:500]}"
            page = f"/runs/{run_id}/rollouts/{wrong}"
            shown = browser.get(page).text
            found = re.findall(r"<textarea name=\"(turn_\d+)\"[^>]*>\n?(.*?)</textarea>", shown, re.S)
            fields = {name: html.unescape(text) for name, text in found}
            last = f"turn_{len(rollouts[wrong]['messages']) - 1}"
            assert list(fields) == [last], fields  # one assistant turn to edit; the prompt is not a field
            form = {
                **fields,
                last: f"Answer: {answers[prompt]}",
                "note": "the right sum",
                "csrf_token": _csrf(browser, page),
            }
            r = browser.post(f"{page}/correct", data=form, timeout=180)  # graded in the sandbox
            assert r.status_code == 303, f"correction form: {r.status_code} {r.text[-1500:]}"
        shown = html.unescape(httpx.get(f"{hub.url}{page}").text)  # what anyone sees now
        labels_part = shown.split('id="labels"', 1)[1].split('id="corrections"', 1)[0]
        assert "incorrect" in labels_part and "by bob" in labels_part, labels_part
        table = shown.split('<table class="corrections">', 1)[1].split("</table>", 1)[0]
        assert "bob" in table and "passed" in table and "the right sum" in table, table
        run_page = httpx.get(f"{hub.url}/runs/{run_id}").text
        assert f"2 of {N_TASKS} rollouts labelled; grader agrees on 2 of 2" in run_page

    with hub.step("5. a second person pulls labels, measures the grader, exports SFT data"):
        admin.verihub("hub", "user", "add", "carol", *hub.where())
        token = _secret(
            "vh_", admin.verihub("hub", "token", "create", "carol", "--scope", "read", *hub.where())
        )
        carol.verihub("login", "--hub", hub.url, "--token", token)
        refused = httpx.post(
            f"{hub.url}/api/v1/runs/{run_id}/rollouts/{right}/labels",
            json={"value": "incorrect"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert refused.status_code == 403  # reading is not labelling
        # the label file carries the reference answers once the hub re-graded the run
        assert _regraded(hub, run_id) == "verified"
        labels = carol.home / "labels.jsonl"
        carol.verihub("labels", "pull", "alice/arith@0.1.0", "-o", str(labels))
        pulled = [json.loads(line) for line in labels.read_text().splitlines()]
        assert sorted(x["label"] for x in pulled) == [False, True] and {x["author"] for x in pulled} == {
            "bob"
        }
        assert all(x["reference"] == answers[x["prompt"]] for x in pulled), pulled
        said = carol.verihub("fidelity", "arith", "--labels", str(labels))
        assert "accuracy" in said.lower() and "2/2" in said, said
        out = carol.home / "out.jsonl"
        carol.verihub("export", "--sft", "--hub", "alice/arith@0.1.0", "--corrected", "-o", str(out))
        records = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(records) == 1 and records[0]["corrected"], records
        assert records[0]["messages"][-1]["content"] == f"Answer: {answers[prompt]}"
        provenance = records[0]["provenance"]
        assert provenance["correction_author"] == "bob" and provenance["run"] == run_id, provenance

    with hub.step("6. pip install from the hub's index alone, then a yank"):
        py = child_venv(tmp_path / "venv", inherit=False, pip=True)
        pip_env = {k: v for k, v in _env().items() if k != "PYTHONPATH" and not k.startswith("PIP_")}
        pip_env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
        only_hub = ["--index-url", f"{hub.url}/simple/"]

        def pip(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [str(py), "-m", "pip", *args], env=pip_env, capture_output=True, text=True, timeout=300
            )

        done = pip("install", "-q", "--no-deps", *only_hub, "verihub-arith")
        assert done.returncode == 0, done.stderr
        probe = (
            "import importlib.metadata as m; d = m.distribution('verihub-arith'); "
            "print(d.version, [e.name for e in d.entry_points if e.group == 'verihub.environments'])"
        )
        got = subprocess.run([str(py), "-c", probe], capture_output=True, text=True, env=pip_env, timeout=60)
        assert got.stdout.strip() == "0.1.0 ['arith']", got.stderr
        said = alice.verihub("yank", "alice/arith@0.1.0", "--reason", "grader accepts -0")
        assert "yanked: grader accepts -0" in said
        assert "yanked: grader accepts -0" in alice.verihub("status", "alice/arith@0.1.0")
        got = pip("download", "-q", "--no-deps", "-d", str(tmp_path / "dl"), *only_hub, "verihub-arith")
        assert got.returncode != 0  # a yanked version is not picked...
        got = pip("download", "--no-deps", "-d", str(tmp_path / "dl"), *only_hub, "verihub-arith==0.1.0")
        assert got.returncode == 0 and "grader accepts -0" in got.stdout + got.stderr  # ...unless pinned
