"""Running models against environments, and the records a run leaves.

Reading guide:

- :mod:`hub.run.client`: the OpenAI-compatible chat client (retries, rate limits, size caps);
  :mod:`hub.run.completions` reads its untrusted answers, :mod:`hub.run.sse` streamed ones,
  :mod:`hub.run.deadlines` keeps its requests' time limits with one timer.
- :mod:`hub.run.local_model`: the embedded model (SmolLM2 on llama.cpp) as a local server.
- :mod:`hub.run.runner`: ``Runner``, ``tasks x rollouts`` with bounded concurrency and resume.
- :mod:`hub.run.rundir`: the run directory (``config.json``, ``rollouts.jsonl``, ``summary.json``).
- :mod:`hub.run.records`: the lines of ``rollouts.jsonl`` (encode, read, append safely).
- :mod:`hub.run.runlock`: one writer per run directory (``flock`` plus a holder record).
- :mod:`hub.run.metrics`: summaries (mean reward and interval, pass@k, pass^k, per-task rates).
- :mod:`hub.run.evaluate`: ``evaluate``/``resume``, the functions behind ``verihub eval``;
  :mod:`hub.run.regrade`: ``regrade`` (keeping the replaced grades under ``regrades/``).
- :mod:`hub.run.viewer`: ``verihub view``, a run as one static, escaped HTML page.
- :mod:`hub.run.sharded`, :mod:`hub.run.ray_grading`: evaluation shards and grading on Ray.
- :mod:`hub.run.judge`: LLM judges for rubric graders, over the client.
- :mod:`hub.run.fake_server`: a scriptable OpenAI-compatible server for tests and benchmarks.

Imports: :mod:`hub.env`, :mod:`hub.registry` (and ``graders``). The leaderboard reads run
records through this package's public names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hub._lazy import surface

if TYPE_CHECKING:
    from hub.run.client import ChatClient
    from hub.run.evaluate import EvalOptions, open_client, open_environment, resume
    from hub.run.local_model import LOCAL_MODELS, LocalModelServer
    from hub.run.metrics import PerTask, Summary, SummaryBuilder, pass_all_k, pass_at_k
    from hub.run.ray_grading import regrade_on_ray
    from hub.run.rundir import CONFIG_FILE, ROLLOUTS_FILE, SUMMARY_FILE, RunConfig, RunDir
    from hub.run.runner import Runner
    from hub.run.sharded import evaluate_sharded
    from hub.run.viewer import write_view

__all__ = [
    "CONFIG_FILE",
    "ChatClient",
    "EvalOptions",
    "LOCAL_MODELS",
    "LocalModelServer",
    "PerTask",
    "ROLLOUTS_FILE",
    "RunConfig",
    "RunDir",
    "Runner",
    "SUMMARY_FILE",
    "Summary",
    "SummaryBuilder",
    "evaluate_sharded",
    "open_client",
    "open_environment",
    "pass_all_k",
    "pass_at_k",
    "regrade_on_ray",
    "resume",
    "write_view",
]

__getattr__, __dir__ = surface(
    __name__,
    {
        "CONFIG_FILE": "hub.run.rundir",
        "ChatClient": "hub.run.client",
        "EvalOptions": "hub.run.evaluate",
        "LOCAL_MODELS": "hub.run.local_model",
        "LocalModelServer": "hub.run.local_model",
        "PerTask": "hub.run.metrics",
        "ROLLOUTS_FILE": "hub.run.rundir",
        "RunConfig": "hub.run.rundir",
        "RunDir": "hub.run.rundir",
        "Runner": "hub.run.runner",
        "SUMMARY_FILE": "hub.run.rundir",
        "Summary": "hub.run.metrics",
        "SummaryBuilder": "hub.run.metrics",
        "evaluate_sharded": "hub.run.sharded",
        "open_client": "hub.run.evaluate",
        "open_environment": "hub.run.evaluate",
        "pass_all_k": "hub.run.metrics",
        "pass_at_k": "hub.run.metrics",
        "regrade_on_ray": "hub.run.ray_grading",
        "resume": "hub.run.evaluate",
        "write_view": "hub.run.viewer",
    },
)
