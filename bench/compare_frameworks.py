"""verihub vs ``verifiers`` (vf-eval) vs ``inspect_ai`` (inspect eval): same workload, same server.

Each framework runs N single-turn rollouts of the same procedural arithmetic tasks (``Compute
<expr>. Reply with the final answer as: Answer: <integer>``, exact-match reward, built in code)
through its own evaluation CLI, at the same concurrency, against one loopback stub server
(``python -m hub.run.fake_server``, its own process, answering "Answer: 42" instantly). Rounds are
interleaved (the order rotates each round) and medians are reported. Measured per run, for the
framework's process only (the stub server is not counted):

- wall time from spawning the CLI to its exit (start-up included) and rollouts/s;
- CPU ms per rollout: user + system CPU of the CLI process and the helper processes it reaps
  (``os.wait4``), divided by rollouts. A /proc sampler also sums the process tree, so helpers
  that are never reaped are not missed; the larger of the two is used.

With ``--baseline K`` (default 50) each round also runs every framework on K rollouts, so the
fixed start-up cost can be taken out: marginal CPU ms per rollout = (CPU(N) - CPU(K)) / (N - K).

The other frameworks live in their own virtual environments (git-ignored), created once::

    python -m venv bench/.venvs/verifiers && bench/.venvs/verifiers/bin/pip install 'verifiers==0.1.14'
    python -m venv bench/.venvs/inspect && bench/.venvs/inspect/bin/pip install 'inspect-ai==0.3.285' openai

Run::

    python bench/compare_frameworks.py                      # 5,000 rollouts, 3 rounds, c=256
    python bench/compare_frameworks.py --rollouts 2000 --rounds 5 --only verihub,inspect

Results are printed as a table and written as JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
VENVS = BENCH / ".venvs"
FRAMEWORKS_DIR = BENCH / "frameworks"
RESULTS_DIR = BENCH / "results"
CLK_TCK = os.sysconf("SC_CLK_TCK")
API_KEY_VAR = "VERIHUB_BENCH_KEY"

VENV_COMMANDS = {
    "verifiers": [
        "python -m venv bench/.venvs/verifiers",
        "bench/.venvs/verifiers/bin/pip install 'verifiers==0.1.14'",
    ],
    "inspect": [
        "python -m venv bench/.venvs/inspect",
        "bench/.venvs/inspect/bin/pip install 'inspect-ai==0.3.285' openai",
    ],
}


# ---------------------------------------------------------------------------------------------
# the stub server


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port: int = s.getsockname()[1]
    s.close()
    return port


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "hub.run.fake_server", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("stub server did not start")


# ---------------------------------------------------------------------------------------------
# the frameworks


@dataclass
class Framework:
    name: str
    python: Path  # interpreter of the framework's environment

    def available(self) -> bool:
        return self.python.exists() and self._cli().exists()

    def _cli(self) -> Path:
        return {
            "verihub": self.python,
            "verifiers": self.python.parent / "vf-eval",
            "verifiers-inproc": self.python.parent / "vf-eval",
            "inspect": self.python.parent / "inspect",
        }[self.name]

    def version(self) -> str:
        dist = {"verihub": "verihub", "inspect": "inspect_ai"}.get(self.name, "verifiers")
        code = f"import importlib.metadata as m; print(m.version({dist!r}))"
        out = subprocess.run([str(self.python), "-c", code], capture_output=True, text=True, check=False)
        return out.stdout.strip() or "?"

    def command(self, base_url: str, n: int, concurrency: int, max_tokens: int, out: Path) -> list[str]:
        if self.name == "verihub":
            return [
                str(self.python),
                "-m",
                "hub",
                "eval",
                "arith",
                "--model",
                "fake",
                "--base-url",
                base_url,
                "--api-key-env",
                API_KEY_VAR,
                "-n",
                str(n),
                "-r",
                "1",
                "-c",
                str(concurrency),
                "--max-tokens",
                str(max_tokens),
                "--no-progress",
                "--out",
                str(out),
            ]
        if self.name.startswith("verifiers"):
            # -d: no TUI; -A: short summary; -s: save results.jsonl (as verihub and inspect do).
            # "verifiers" is the default mode (env server + worker processes over ZMQ);
            # "verifiers-inproc" adds --disable-env-server (everything in one process).
            extra = ["--disable-env-server"] if self.name == "verifiers-inproc" else []
            return [
                str(self._cli()),
                "verifiers_env",
                "-a",
                json.dumps({"n": n}),
                "-m",
                "fake",
                "-b",
                base_url,
                "-k",
                API_KEY_VAR,
                "-n",
                str(n),
                "-r",
                "1",
                "-c",
                str(concurrency),
                "-t",
                str(max_tokens),
                "-d",
                "-A",
                "-s",
                "-o",
                str(out),
                *extra,
            ]
        # inspect takes task files relative to its working directory (the repository root)
        return [
            str(self._cli()),
            "eval",
            str((FRAMEWORKS_DIR / "inspect_task.py").relative_to(ROOT)),
            "-T",
            f"n={n}",
            "--model",
            "openai/fake",
            "--model-base-url",
            base_url,
            "-M",
            "responses_api=false",
            "--max-connections",
            str(concurrency),
            "--max-tokens",
            str(max_tokens),
            "--display",
            "none",
            "--log-dir",
            str(out),
        ]

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env[API_KEY_VAR] = "bench"
        env["OPENAI_API_KEY"] = "bench"  # inspect's openai provider reads this one
        env.pop("VIRTUAL_ENV", None)
        if self.name.startswith("verifiers"):
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(FRAMEWORKS_DIR), env.get("PYTHONPATH")]))
        return env

    def check(self, out: Path, n: int) -> str | None:
        """None when the run produced N graded rollouts without errors, else what is wrong."""
        if self.name == "verihub":
            summary = json.loads((out / "summary.json").read_text())
            if summary["n_rollouts"] != n or summary["n_errors"]:
                return f"n_rollouts={summary['n_rollouts']} n_errors={summary['n_errors']}"
            return None
        if self.name.startswith("verifiers"):
            files = list(out.rglob("results.jsonl"))
            if len(files) != 1:
                return f"expected one results.jsonl, found {len(files)}"
            lines = [json.loads(line) for line in files[0].read_text().splitlines() if line.strip()]
            errors = sum(1 for row in lines if row.get("error"))
            if len(lines) != n or errors:
                return f"rollouts={len(lines)} errors={errors}"
            return None
        logs = list(out.glob("*.eval"))
        if len(logs) != 1:
            return f"expected one .eval log, found {len(logs)}"
        code = (
            "import sys; from inspect_ai.log import read_eval_log\n"
            "l = read_eval_log(sys.argv[1], header_only=True)\n"
            "r = l.results\n"
            "print(l.status, r.total_samples if r else 0, r.completed_samples if r else 0)\n"
        )
        res = subprocess.run([str(self.python), "-c", code, str(logs[0])], capture_output=True, text=True)
        parts = res.stdout.split()
        if res.returncode != 0 or len(parts) != 3:
            return f"could not read the log: {res.stderr.strip()[-300:]}"
        status, total, completed = parts[0], int(parts[1]), int(parts[2])
        if status != "success" or total != n or completed != n:
            return f"status={status} total={total} completed={completed}"
        return None


def frameworks() -> dict[str, Framework]:
    return {
        "verihub": Framework("verihub", Path(sys.executable)),
        "verifiers": Framework("verifiers", VENVS / "verifiers" / "bin" / "python"),
        "verifiers-inproc": Framework("verifiers-inproc", VENVS / "verifiers" / "bin" / "python"),
        "inspect": Framework("inspect", VENVS / "inspect" / "bin" / "python"),
    }


# ---------------------------------------------------------------------------------------------
# measuring one run


def _proc_stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, user+system CPU seconds of the process itself) from /proc."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / CLK_TCK


class TreeSampler(threading.Thread):
    """Samples the CPU of every process under ``root`` (by parent links) until stopped."""

    def __init__(self, root: int, interval: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.interval = interval
        self.cpu: dict[int, float] = {}
        self.helpers: set[int] = set()
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            self.sample()
            self._halt.wait(self.interval)

    def sample(self) -> None:
        parents: dict[int, int] = {}
        cpu: dict[int, float] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                stat = _proc_stat(int(entry))
                if stat is not None:
                    parents[int(entry)], cpu[int(entry)] = stat
        tree = {self.root}
        changed = True
        while changed:
            changed = False
            for pid, ppid in parents.items():
                if ppid in tree and pid not in tree:
                    tree.add(pid)
                    changed = True
        for pid in tree:
            if pid in cpu:
                self.cpu[pid] = max(self.cpu.get(pid, 0.0), cpu[pid])
        self.helpers |= tree - {self.root}

    def stop(self) -> None:
        self._halt.set()
        self.join()

    def total(self) -> float:
        return sum(self.cpu.values())


def run_once(fw: Framework, base_url: str, n: int, concurrency: int, max_tokens: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix=f"cmp-{fw.name}-"))
    out = work / "out"
    log = work / "cli.log"
    cmd = fw.command(base_url, n, concurrency, max_tokens, out)
    load_before = os.getloadavg()[0]
    with log.open("wb") as fh:
        t0 = time.perf_counter()
        cwd = ROOT if fw.name == "inspect" else work
        proc = subprocess.Popen(cmd, cwd=cwd, env=fw.env(), stdout=fh, stderr=subprocess.STDOUT)
        sampler = TreeSampler(proc.pid)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        sampler.stop()
    proc.returncode = os.waitstatus_to_exitcode(status)
    result: dict[str, Any] = {
        "framework": fw.name,
        "rollouts": n,
        "wall_s": wall,
        "load_1m_before": load_before,
    }
    problem = None
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-1500:]
        problem = f"exit {proc.returncode}: {tail}"
    else:
        try:
            problem = fw.check(out, n)
        except Exception as exc:  # noqa: BLE001 - reported, not raised
            problem = f"check failed: {exc!r}"
    waited_cpu = usage.ru_utime + usage.ru_stime
    cpu = max(waited_cpu, sampler.total())
    result.update(
        ok=problem is None,
        problem=problem,
        cpu_s=cpu,
        cpu_waited_s=waited_cpu,
        cpu_sampled_tree_s=sampler.total(),
        helper_processes=len(sampler.helpers),
        rollouts_per_s=n / wall,
        cpu_ms_per_rollout=1000 * cpu / n,
        peak_rss_mb=usage.ru_maxrss / 1024,
        command=cmd,
    )
    shutil.rmtree(work, ignore_errors=True)
    return result


# ---------------------------------------------------------------------------------------------
# the report


def _median(rows: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(r[key] for r in rows))


def summarise(
    runs: list[dict[str, Any]], baselines: list[dict[str, Any]], names: list[str]
) -> list[dict[str, Any]]:
    table: list[dict[str, Any]] = []
    for name in names:
        rows = [r for r in runs if r["framework"] == name and r["ok"]]
        if not rows:
            table.append({"framework": name, "ok_runs": 0})
            continue
        entry: dict[str, Any] = {
            "framework": name,
            "ok_runs": len(rows),
            "wall_s": _median(rows, "wall_s"),
            "rollouts_per_s": _median(rows, "rollouts_per_s"),
            "cpu_ms_per_rollout": _median(rows, "cpu_ms_per_rollout"),
            "peak_rss_mb": _median(rows, "peak_rss_mb"),
            "helper_processes": max(r["helper_processes"] for r in rows),
        }
        base = {b["round"]: b for b in baselines if b["framework"] == name and b["ok"]}
        pairs = [(base[r["round"]], r) for r in rows if r["round"] in base]
        if pairs:
            # paired within a round (same load), then the median over rounds
            k, n = pairs[0][0]["rollouts"], pairs[0][1]["rollouts"]
            entry["startup_wall_s"] = statistics.median(b["wall_s"] for b, _ in pairs)
            entry["startup_cpu_s"] = statistics.median(b["cpu_s"] for b, _ in pairs)
            entry["marginal_cpu_ms_per_rollout"] = statistics.median(
                1000 * (r["cpu_s"] - b["cpu_s"]) / (n - k) for b, r in pairs
            )
            walls = [r["wall_s"] - b["wall_s"] for b, r in pairs]
            entry["marginal_rollouts_per_s"] = (
                statistics.median((n - k) / w for w in walls) if all(w > 0 for w in walls) else float("nan")
            )
        table.append(entry)
    ref = next((t for t in table if t["framework"] == "verihub" and t.get("ok_runs")), None)
    for t in table:
        if ref and t.get("ok_runs"):
            t["wall_x_verihub"] = t["wall_s"] / ref["wall_s"]
            t["cpu_x_verihub"] = t["cpu_ms_per_rollout"] / ref["cpu_ms_per_rollout"]
            if "marginal_cpu_ms_per_rollout" in t and "marginal_cpu_ms_per_rollout" in ref:
                t["marginal_cpu_x_verihub"] = (
                    t["marginal_cpu_ms_per_rollout"] / ref["marginal_cpu_ms_per_rollout"]
                )
    return table


def print_table(table: list[dict[str, Any]], versions: dict[str, str], args: argparse.Namespace) -> None:
    print(
        f"\n{args.rollouts} single-turn rollouts, concurrency {args.concurrency}, "
        f"{args.rounds} interleaved rounds, medians (start-up included)"
    )
    head = (
        f"{'framework':<17} {'version':<9} {'wall s':>8} {'rollouts/s':>11} {'CPU ms/rollout':>15} "
        f"{'wall x':>7} {'CPU x':>7} {'RSS MB':>7}"
    )
    print(head)
    print("-" * len(head))
    for t in table:
        if not t.get("ok_runs"):
            print(f"{t['framework']:<17} {versions.get(t['framework'], '?'):<9} (no successful run)")
            continue
        print(
            f"{t['framework']:<17} {versions[t['framework']]:<9} {t['wall_s']:8.2f} "
            f"{t['rollouts_per_s']:11.0f} "
            f"{t['cpu_ms_per_rollout']:15.3f} {t.get('wall_x_verihub', float('nan')):7.2f} "
            f"{t.get('cpu_x_verihub', float('nan')):7.2f} {t['peak_rss_mb']:7.0f}"
        )
    if any("startup_wall_s" in t for t in table):
        print(
            f"\nstart-up taken out (each round also ran {args.baseline} rollouts; paired per round, medians;"
            " nan: load changed so much within a round that the difference is meaningless)"
        )
        head2 = (
            f"{'framework':<17} {'start-up wall s':>16} {'start-up CPU s':>15} "
            f"{'marginal rollouts/s':>20} {'marginal CPU ms/rollout':>24} {'CPU x':>7}"
        )
        print(head2)
        print("-" * len(head2))
        for t in table:
            if "startup_wall_s" in t:
                print(
                    f"{t['framework']:<17} {t['startup_wall_s']:16.2f} {t['startup_cpu_s']:15.2f} "
                    f"{t['marginal_rollouts_per_s']:20.0f} {t['marginal_cpu_ms_per_rollout']:24.3f} "
                    f"{t.get('marginal_cpu_x_verihub', float('nan')):7.2f}"
                )
    print(
        "\nwall x / CPU x: the framework's median divided by verihub's (above 1: verihub is faster/cheaper)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rollouts", type=int, default=5000, help="rollouts per run (N tasks x 1)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument(
        "--baseline",
        type=int,
        default=50,
        help="also run this many rollouts per round to take start-up out (0: skip)",
    )
    parser.add_argument(
        "--only",
        default="verihub,verifiers,verifiers-inproc,inspect",
        help="comma-separated frameworks (verihub, verifiers, verifiers-inproc, inspect)",
    )
    parser.add_argument("--json", type=Path, default=None, help="results file (default: bench/results/...)")
    args = parser.parse_args(argv)

    all_fw = frameworks()
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in all_fw]
    if unknown:
        parser.error(f"unknown frameworks {unknown}; known: {list(all_fw)}")
    missing = [n for n in names if not all_fw[n].available()]
    for name in missing:
        venv = name.split("-")[0]
        print(f"{name}: no virtual environment at bench/.venvs/{venv}; create it with:", file=sys.stderr)
        for line in VENV_COMMANDS[venv]:
            print(f"    {line}", file=sys.stderr)
    names = [n for n in names if n not in missing]
    if not names:
        return 1
    versions = {n: all_fw[n].version() for n in names}
    print("versions: " + ", ".join(f"{n} {v}" for n, v in versions.items()))

    server, url = start_server()
    runs: list[dict[str, Any]] = []
    baselines: list[dict[str, Any]] = []
    try:
        for rnd in range(args.rounds):
            order = names[rnd % len(names) :] + names[: rnd % len(names)]
            for name in order:
                if args.baseline:
                    b = run_once(all_fw[name], url, args.baseline, args.concurrency, args.max_tokens)
                    b["round"] = rnd
                    baselines.append(b)
                r = run_once(all_fw[name], url, args.rollouts, args.concurrency, args.max_tokens)
                r["round"] = rnd
                runs.append(r)
                status = "ok" if r["ok"] else f"FAILED ({r['problem'][:300]})"
                print(
                    f"round {rnd + 1}/{args.rounds} {name:<16} wall {r['wall_s']:7.2f} s  "
                    f"{r['rollouts_per_s']:7.0f} rollouts/s  CPU {r['cpu_ms_per_rollout']:7.3f} ms/rollout  "
                    f"(waited {r['cpu_waited_s']:.1f} s, tree {r['cpu_sampled_tree_s']:.1f} s, "
                    f"{r['helper_processes']} helpers, load {r['load_1m_before']:.1f})  {status}",
                    flush=True,
                )
    finally:
        server.kill()
        server.wait()

    table = summarise(runs, baselines, names)
    print_table(table, versions, args)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = args.json or RESULTS_DIR / f"compare-frameworks-{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}.json"
    path.write_text(
        json.dumps(
            {
                "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
                "cpu_count": os.cpu_count(),
                "python": sys.version.split()[0],
                "versions": versions,
                "summary": table,
                "runs": runs,
                "baselines": baselines,
            },
            indent=2,
        )
    )
    print(f"results: {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0 if all(r["ok"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
