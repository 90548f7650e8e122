"""Benchmark of the hub server: the simple index under load, side by side with pypiserver, the time
from ``push`` returning to the version being installable, and the review's duration for arith.

    python bench/bench_index.py [--bundle BUNDLE_DIR] [--clients 64] [--seconds 10] [--rounds 3]

Both servers run on loopback, serve the same wheel and sdist, and are loaded in alternating
rounds by the same client (aiohttp, ``--clients`` concurrent connections, each requesting
``/simple/verihub-arith/`` in a loop). pypiserver runs as its docs recommend for more than toy
use (``--server auto``, which picks waitress when it is installed, as here); the hub runs as
``verihub hub serve`` (uvicorn, one process, SQLite), loaded once anonymously (pages come from
its cache) and once with a token (every request authenticated and rendered from the database).
Prints one JSON document; medians over rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_up(url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{url} did not come up")


def start(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    fh = log.open("wb")
    return subprocess.Popen(cmd, stdout=fh, stderr=fh, env=env, start_new_session=True)


def stop(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


async def load(url: str, clients: int, seconds: float, token: str = "") -> dict[str, float]:
    import aiohttp

    latencies: list[float] = []
    errors = 0
    stop_at = 0.0

    async def client(session: aiohttp.ClientSession) -> None:
        nonlocal errors
        while time.perf_counter() < stop_at:
            t0 = time.perf_counter()
            async with session.get(url) as resp:
                await resp.read()
                if resp.status != 200:
                    errors += 1
            latencies.append(time.perf_counter() - t0)

    conn = aiohttp.TCPConnector(limit=clients)
    headers = {"Authorization": aiohttp.encode_basic_auth("__token__", token)} if token else {}
    async with aiohttp.ClientSession(connector=conn, headers=headers) as session:
        stop_at = time.perf_counter() + 1.0  # warm-up, not counted
        await asyncio.gather(*(client(session) for _ in range(clients)))
        latencies.clear()
        stop_at = time.perf_counter() + seconds
        t0 = time.perf_counter()
        await asyncio.gather(*(client(session) for _ in range(clients)))
        elapsed = time.perf_counter() - t0
    latencies.sort()
    return {
        "rps": len(latencies) / elapsed,
        "p50_ms": 1000 * latencies[len(latencies) // 2],
        "p99_ms": 1000 * latencies[int(len(latencies) * 0.99)],
        "errors": errors,
    }


def build_bundle(out: Path) -> Path:
    from hub.review.check import CheckOptions
    from hub.review.submit import submit

    fast = CheckOptions(num_tasks=10, gold_tasks=8, probe_tasks=2, grade_timeout_s=2.0)
    bundle, _ = submit(REPO / "environments" / "arith", out=out, max_tokens=16, check_options=fast)
    return bundle


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bundle", type=Path, help="An arith submission bundle (default: build one).")
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from hub.client.api import hub_request, pack_bundle

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with tempfile.TemporaryDirectory(prefix="bench-index-") as tmp_s:
        tmp = Path(tmp_s)
        bundle = args.bundle or build_bundle(tmp / "bundle")
        archive = pack_bundle(bundle, tmp / "arith.tar.gz")
        data = tmp / "hub"
        py = [sys.executable, "-m", "hub", "hub"]
        subprocess.run(
            [*py, "user", "add", "bench", "--data", str(data)], env=env, check=True, capture_output=True
        )
        token = subprocess.run(
            [*py, "token", "create", "bench", "--scope", "push", "--data", str(data)],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        hub_port, pypi_port = free_port(), free_port()
        hub_url, pypi_url = f"http://127.0.0.1:{hub_port}", f"http://127.0.0.1:{pypi_port}"
        hub_proc = start([*py, "serve", "--data", str(data), "--port", str(hub_port)], tmp / "hub.log", env)
        result: dict[str, Any] = {"clients": args.clients, "seconds": args.seconds, "rounds": args.rounds}
        try:
            wait_up(hub_url + "/simple/")
            t0 = time.perf_counter()
            hub_request(hub_url, "/api/v1/push", token=token, method="POST", body=archive)
            pushed = time.perf_counter()
            result["push_s"] = round(pushed - t0, 3)
            while (
                b"verihub_arith"
                not in urllib.request.urlopen(hub_url + "/simple-unreviewed/verihub-arith/").read()
            ):
                time.sleep(0.005)
            result["push_to_listed_ms"] = round(1000 * (time.perf_counter() - pushed), 1)
            dl = tmp / "dl"
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "-q",
                    "--no-deps",
                    "-d",
                    str(dl),
                    "--index-url",
                    hub_url + "/simple-unreviewed/",
                    "verihub-arith",
                ],
                check=True,
                env={**env, "PIP_CONFIG_FILE": os.devnull},
                capture_output=True,
            )
            result["push_to_pip_download_s"] = round(time.perf_counter() - pushed, 2)
            while True:
                v = hub_request(hub_url, "/api/v1/envs/bench/arith/0.1.0")
                if v["state"] in ("passed", "failed"):
                    break
                time.sleep(0.5)
            result["review_state"] = v["state"]
            result["review_duration_s"] = v["report"].get("duration_s")
            result["review_check_s"] = (v["report"].get("check") or {}).get("duration_s")
            pkgs = tmp / "packages"
            pkgs.mkdir()
            for f in (bundle / "dist").iterdir():
                shutil.copy(f, pkgs / f.name)
            pypi_proc = start(
                [
                    "pypi-server",
                    "run",
                    "-p",
                    str(pypi_port),
                    "-i",
                    "127.0.0.1",
                    "--server",
                    "auto",
                    str(pkgs),
                ],
                tmp / "pypi.log",
            )
            try:
                wait_up(pypi_url + "/simple/")
                runs: dict[str, list[dict[str, float]]] = {"hub": [], "pypiserver": [], "hub_with_token": []}
                for _ in range(args.rounds):
                    runs["hub"].append(
                        asyncio.run(load(hub_url + "/simple/verihub-arith/", args.clients, args.seconds))
                    )
                    runs["pypiserver"].append(
                        asyncio.run(load(pypi_url + "/simple/verihub-arith/", args.clients, args.seconds))
                    )
                    runs["hub_with_token"].append(  # authenticated: never served from the page cache
                        asyncio.run(
                            load(hub_url + "/simple/verihub-arith/", args.clients, args.seconds, token)
                        )
                    )
            finally:
                stop(pypi_proc)
            for name, rs in runs.items():
                result[name] = {
                    k: round(statistics.median(r[k] for r in rs), 2)
                    for k in ("rps", "p50_ms", "p99_ms", "errors")
                }
                result[name]["rounds_rps"] = [round(r["rps"], 1) for r in rs]
            result["rps_ratio_hub_over_pypiserver"] = round(
                result["hub"]["rps"] / result["pypiserver"]["rps"], 2
            )
        finally:
            stop(hub_proc)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
