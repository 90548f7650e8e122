"""The eval card's settings: the seed a run set (never "server default": the runner derives every
rollout's sampling seed from it) and the environment arguments, shown unfolded."""

from __future__ import annotations

from pathlib import Path

from hub.env import Sampling
from leaderboard import entry_from_run, eval_card, render_card, verify_run
from leaderboard.testing import write_run

REWARDS = ((1.0, 0.0), (1.0, 1.0))


def _pair(tmp: Path, name: str, seed: int, sampling: Sampling | None = None, **args: object) -> tuple:
    verified = verify_run(write_run(tmp / name, rewards=REWARDS, seed=seed, sampling=sampling))
    entry = entry_from_run(verified).model_copy(update={"env_args": dict(args), "id": name})
    return entry, verified.summary


def test_the_seed_is_the_runs_and_the_arguments_are_unfolded(tmp_path: Path) -> None:
    entry, summary = _pair(tmp_path, "a", 7, difficulty="hard", n=3)
    card = eval_card([(entry, summary)], env_id=entry.env_id, env_version=entry.env_version)
    (row,) = card.models
    assert dict(row.sampling)["seed"] == "per rollout, from run seed 7"
    assert row.env_args == {"difficulty": "hard", "n": 3} and row.split == "test"
    html = str(render_card(card))
    settings = html.split("Sampling settings")[1].split("</table>")[0]
    assert "server default</td><td>8 x" not in settings.replace("<td>7</td>", "")
    assert "<code>difficulty = &#34;hard&#34;</code>" in settings and "<code>n = 3</code>" in settings
    assert "<details" not in settings  # unfolded, not behind a summary


def test_a_seed_the_sampling_set_stays_and_merged_runs_list_theirs(tmp_path: Path) -> None:
    entry, summary = _pair(tmp_path, "s", 1, Sampling(temperature=0.7, max_tokens=64, seed=99))
    card = eval_card([(entry, summary)], env_id=entry.env_id, env_version=entry.env_version)
    assert dict(card.models[0].sampling)["seed"] == "99"
    # identical runs but for the seed are one row: it lists both seeds
    one, s1 = _pair(tmp_path, "x", 3)
    two, s2 = _pair(tmp_path, "y", 5)
    two = two.model_copy(update={"created_at": one.created_at})
    card = eval_card([(one, s1), (two, s2)], env_id=one.env_id, env_version=one.env_version)
    assert [dict(m.sampling)["seed"] for m in card.models] == ["per rollout, from run seeds 3, 5"]
