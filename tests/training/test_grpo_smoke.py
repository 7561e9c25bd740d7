"""A training smoke: one GRPO update of a tiny model through TRL, rewarded by occubench.

Two reference tasks; TRL's ``GRPOTrainer`` samples completions of their prompts
(``completion_prompt``), ``rollout_rewards`` rolls each out through an occubench episode
(the canned simulator answers the calls, the tasks' checks grade) into its reward, and
the trainer takes one gradient step. Nothing is downloaded: the model is a two-layer
Qwen2 built from a config with random weights, the tokenizer is built here. It is opt-in
(``python -m pytest -m train -s tests/training/test_grpo_smoke.py``: the train extra,
about 30 s, most of it importing torch) and prints the step's loss, reward and time.
"""

from __future__ import annotations

import json
import math

import pytest

from occubench.training import EpisodeSource, RewardRule, completion_prompt, rollout_rewards

pytestmark = pytest.mark.train

TASKS = [1001, 1002]
GENERATIONS = 4
"""Completions per prompt: one GRPO group."""
SOURCE = EpisodeSource.of("reference", "occubench/canned", task_ids=TASKS, protocol="occubench")
"""The tasks' episodes: the canned simulator answers their known calls, their checks grade."""


def tiny_tokenizer(prompts: list[str]):
    """A word-level tokenizer built in memory: the prompts' words, and each known call of
    the tasks as one token, so that a random model's samples make some right calls and a
    group's rewards differ (GRPO learns nothing from a group of equal rewards)."""
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    calls = [
        "<tool_call>" + json.dumps({"name": c.tool, "arguments": c.arguments}) + "</tool_call>"
        for task_id in TASKS
        for c in SOURCE.episode(task_id).env.canned_observations
    ]
    words = ["<pad>", "<eos>", "<unk>", *sorted({w for p in prompts for w in p.split()})]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.add_tokens([AddedToken(c, normalized=False) for c in calls])
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        pad_token="<pad>",
        eos_token="<eos>",
        unk_token="<unk>",
        padding_side="left",
    )


def test_one_grpo_update_on_occubench_rewards(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    torch = pytest.importorskip("torch", reason="the train extra (torch) is not installed")
    pytest.importorskip("trl", reason="the train extra (trl) is not installed")
    from datasets import Dataset
    from transformers import Qwen2Config, Qwen2ForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    texts = [completion_prompt(SOURCE.episode(t).opening()) for t in TASKS]
    tokenizer = tiny_tokenizer(texts)
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
    )
    model = Qwen2ForCausalLM(config)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    args = GRPOConfig(
        output_dir=str(tmp_path),
        use_cpu=True,
        bf16=False,
        seed=0,
        max_steps=1,
        per_device_train_batch_size=GENERATIONS * len(TASKS),
        num_generations=GENERATIONS,
        max_completion_length=48,
        learning_rate=1e-2,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
    )
    score = rollout_rewards(SOURCE.episode, RewardRule.CHECKS)
    given: dict[int, list[float]] = {task_id: [] for task_id in TASKS}

    async def occubench(prompts, completions, task_id, **columns):
        rewards = await score(prompts=prompts, completions=completions, task_id=task_id)
        for task, reward in zip(task_id, rewards, strict=True):
            given[task].append(reward)
        return rewards

    trainer = GRPOTrainer(
        model=model,
        reward_funcs=occubench,
        args=args,
        train_dataset=Dataset.from_list(
            [{"prompt": p, "task_id": t} for p, t in zip(texts, TASKS, strict=True)]
        ),
        processing_class=tokenizer,
    )
    trainer.train()

    step = trainer.state.log_history[0]
    print(
        f"\nGRPO step on tasks {TASKS} ({GENERATIONS} completions each, "
        f"{sum(p.numel() for p in model.parameters())} parameters): "
        f"loss {step['loss']:.3g}, reward {step['reward']:.3f} "
        f"(std {step['reward_std']:.3f}), grad norm {step['grad_norm']:.3g}, "
        f"step time {step['step_time']:.2f} s; rewards by task {given}"
    )
    assert math.isfinite(step["loss"])
    rewards = [r for task in TASKS for r in given[task]]
    assert len(rewards) == GENERATIONS * len(TASKS)  # each completion rolled out once
    assert step["reward"] == pytest.approx(sum(rewards) / len(rewards))  # TRL's is occubench's
    assert step["reward_std"] > 0  # the groups' rewards differ: a learning signal
    changed = [n for n, p in model.named_parameters() if not torch.equal(before[n], p)]
    assert len(changed) == len(before)  # the gradient step reached every parameter
