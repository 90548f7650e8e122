"""Running models against environments, and the records a run leaves.

Reading guide:

- :mod:`hub.run.client`: the OpenAI-compatible chat client (retries, rate limits, size caps);
  :mod:`hub.run.completions` reads its untrusted answers, :mod:`hub.run.sse` streamed ones.
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

from hub.run.metrics import PerTask, Summary, SummaryBuilder, pass_all_k, pass_at_k
from hub.run.rundir import CONFIG_FILE, ROLLOUTS_FILE, SUMMARY_FILE, RunConfig, RunDir

__all__ = [
    "CONFIG_FILE",
    "ROLLOUTS_FILE",
    "SUMMARY_FILE",
    "PerTask",
    "RunConfig",
    "RunDir",
    "Summary",
    "SummaryBuilder",
    "pass_all_k",
    "pass_at_k",
]
