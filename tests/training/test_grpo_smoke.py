"""A training smoke: GRPO steps of a tiny model through TRL, each rollout multi-turn.

The trainer reads the verifiers environment's training split (``env.get_dataset()``:
two of three reference tasks, the third held out). Its rollout function (TRL's
``rollout_func``) plays each rollout through the verifiers environment
(``OccuBenchVerifiersEnv.rollout``: an occubench episode, the canned simulator answering
the calls): the policy is asked for a turn, its ``<tool_call>`` blocks are made as
``episode.step`` calls, their observations are appended to its conversation, and it is
asked again with them, until a turn without a call (the answer) or the turn cap; the
episode is then graded by the task's checks and the share passed is the reward
(``RewardRule.CHECKS``). The completion the loss sees is every turn's sampled tokens
with the observations' tokens between them, masked out of the loss (``env_mask``).

Nothing is downloaded: the model is a two-layer Qwen2 built from a config with random
weights, the tokenizer is built here. It is opt-in (``python -m pytest -m train -s
tests/training/test_grpo_smoke.py``: the train and verifiers extras) and prints each
step's reward and the rollouts' turns.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from dataclasses import dataclass
from itertools import count
from types import SimpleNamespace
from typing import Any

import pytest

from occubench.grading import Grade
from occubench.training import (
    CALL_FORMAT,
    EPISODE_KEY,
    GRADE_KEY,
    EpisodeSource,
    RewardRule,
    parse_completion,
    reward_of,
)

pytestmark = pytest.mark.train

TASKS = [1001, 1002, 1005]
"""The tasks selected; the environment's split holds one out (``eval_fraction=1/3``)."""
SPLIT = {"eval_fraction": 1 / 3, "split_seed": 0}
GENERATIONS = 4
"""Rollouts per prompt: one GRPO group."""
STEPS = 2
MAX_TURNS = 4
"""Model turns of a rollout: the verifiers environment's cap."""
TURN_TOKENS = 16
"""Most tokens the policy samples in one turn."""
ROLES = {"system": "<|system|>", "user": "<|user|>", "assistant": "<|assistant|>"}
TOOL, TOOLS = "<|tool|>", "<|tools|>"


def known_calls(task_ids: list[int]) -> tuple[list[str], list[str]]:
    """The tasks' known calls as ``<tool_call>`` blocks, and their observations' words."""
    source = EpisodeSource.of("reference", "occubench/canned", task_ids=task_ids)
    calls, words = [], set()
    for task_id in task_ids:
        for canned in source.episode(task_id).env.canned_observations or []:
            call = {"name": canned.tool, "arguments": canned.arguments}
            calls.append("<tool_call>" + json.dumps(call) + "</tool_call>")
            words |= set(json.dumps(canned.observation).split())
    return calls, sorted(words)


def tiny_tokenizer(calls: list[str], words: list[str]):
    """A word-level tokenizer built in memory: the role markers, the observations' words
    (other words read as ``<unk>``), and each known call as one token, so that a random
    model's turns often make a call (and go on to another turn) and some make the right
    ones (a group's rewards differ: GRPO learns nothing from a group of equal rewards)."""
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = ["<pad>", "<eos>", "<unk>", *words]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(vocab)}, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    markers = [*ROLES.values(), TOOL, TOOLS]
    tokenizer.add_tokens([AddedToken(t, normalized=False) for t in [*markers, *calls]])
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        pad_token="<pad>",
        eos_token="<eos>",
        unk_token="<unk>",
        padding_side="left",
    )


@dataclass
class Turn:
    """One request of the policy: what it was shown and what it sampled."""

    prompt_text: str
    prompt_ids: list[int]
    completion_ids: list[int]
    calls: int


class PolicyClient:
    """verifiers' OpenAI client, answered in this process by the policy being trained.

    A request's conversation becomes token ids message by message (an assistant message
    as the very ids sampled for it, found by its first call's id), the policy samples a
    turn, and the turn's ``<tool_call>`` blocks (occubench's ``parse_completion``) become
    the reply's tool calls. Each turn is kept by the reply's id.
    """

    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.model, self.tokenizer = model, tokenizer
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))
        self.turns: dict[str, Turn] = {}
        self._sampled: dict[str, list[int]] = {}
        self._ids = count()

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def render(self, message: dict[str, Any]) -> tuple[str, list[int]]:
        role, content = message["role"], str(message.get("content") or "")
        if role == "assistant":
            sampled = self._sampled[message["tool_calls"][0]["id"]]
            ids = self.encode(ROLES["assistant"]) + sampled
            return ROLES["assistant"] + " " + self.tokenizer.decode(sampled) + "\n", ids
        text = f"{ROLES.get(role, TOOL)} {content}\n"
        return text, self.encode(text)

    async def create(self, model: str, messages: list, tools: list | None = None, **_: Any):
        import torch
        from openai.types.chat import ChatCompletion, ChatCompletionMessageToolCall

        head = f"{TOOLS} {json.dumps(tools or [])} {CALL_FORMAT}\n"
        pieces = [(head, self.encode(head)), *map(self.render, messages)]
        prompt_text = "".join(t for t, _ in pieces) + ROLES["assistant"]
        prompt_ids = [i for _, ids in pieces for i in ids] + self.encode(ROLES["assistant"])
        with torch.no_grad():
            out = self.model.generate(
                torch.tensor([prompt_ids]),
                attention_mask=torch.ones(1, len(prompt_ids), dtype=torch.long),
                do_sample=True,
                max_new_tokens=TURN_TOKENS,
                min_new_tokens=1,
                pad_token_id=self.tokenizer.pad_token_id,
                eos_token_id=self.tokenizer.eos_token_id,
            )
        sampled = out[0, len(prompt_ids) :].tolist()
        ended = sampled[-1] == self.tokenizer.eos_token_id
        text = self.tokenizer.decode(sampled[:-1] if ended else sampled)
        reply_id = f"turn-{next(self._ids)}"
        calls = [
            ChatCompletionMessageToolCall(
                id=f"{reply_id}-{i}",
                type="function",
                function={"name": c.tool, "arguments": json.dumps(c.arguments)},
            )
            for i, c in enumerate(parse_completion(text).calls)
        ]
        if calls:
            self._sampled[calls[0].id] = sampled
        self.turns[reply_id] = Turn(prompt_text, prompt_ids, sampled, len(calls))
        return ChatCompletion.model_validate(
            {
                "id": reply_id,
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop" if ended else "length",
                        "message": {
                            "role": "assistant",
                            "content": text,
                            "tool_calls": [c.model_dump() for c in calls] or None,
                        },
                    }
                ],
            }
        )


@dataclass
class Played:
    """One rollout: its task, the policy's turns, the observations, the reward."""

    task_id: int
    turns: list[Turn]
    observations: list[str]
    reward: float


def play(env: Any, policy: PolicyClient, rows: dict[str, dict], prompts: list[str]):
    """The rollouts of a batch through the verifiers environment, one after another."""

    async def rollouts() -> list[Any]:
        return [await env.rollout(dict(rows[p]), policy, "policy") for p in prompts]

    played = []
    for state in asyncio.run(rollouts()):
        assert state.get("error") is None, state.get("error")
        grade = Grade.model_validate(state[GRADE_KEY])  # graded once the rollout ended
        episode = state[EPISODE_KEY]
        played.append(
            Played(
                task_id=int(state["info"]["task_id"]),
                turns=[policy.turns[step["response"].id] for step in state["trajectory"]],
                observations=[m.text for m in episode.messages if m.role == "tool"],
                reward=reward_of(grade, RewardRule.CHECKS),
            )
        )
    return played


def sequence(turns: list[Turn]) -> tuple[list[int], list[int]]:
    """A rollout's completion ids (every turn's samples with the observations between
    them) and its mask (1: the policy's tokens, 0: the environment's)."""
    ids: list[int] = []
    mask: list[int] = []
    for before, turn in zip([None, *turns], turns, strict=False):
        if before is not None:
            seen = before.prompt_ids + before.completion_ids
            assert turn.prompt_ids[: len(seen)] == seen  # the conversation only grows
            between = turn.prompt_ids[len(seen) :]
            ids += between
            mask += [0] * len(between)
        ids += turn.completion_ids
        mask += [1] * len(turn.completion_ids)
    return ids, mask


def test_grpo_steps_on_multi_turn_occubench_rollouts(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    torch = pytest.importorskip("torch", reason="the train extra (torch) is not installed")
    pytest.importorskip("trl", reason="the train extra (trl) is not installed")
    pytest.importorskip("verifiers", reason="the verifiers extra is not installed")
    from datasets import Dataset
    from transformers import Qwen2Config, Qwen2ForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from occubench.training import load_environment

    env = load_environment(task_ids=TASKS, protocol="occubench", max_turns=MAX_TURNS, **SPLIT)
    train = {row["prompt"][-1]["content"]: row for row in env.get_dataset()}
    held_out = [json.loads(row["info"])["task_id"] for row in env.get_eval_dataset()]
    trained = sorted(json.loads(row["info"])["task_id"] for row in train.values())
    assert len(trained) == 2 and len(held_out) == 1 and held_out[0] not in trained

    calls, words = known_calls(trained)
    tokenizer = tiny_tokenizer(calls, words)
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
    )
    model = Qwen2ForCausalLM(config)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    policy = PolicyClient(model, tokenizer)
    batches: list[list[Played]] = []

    def rollout_func(prompts: list[str], trainer: Any) -> dict[str, Any]:
        policy.model = trainer.model
        played = play(env, policy, train, prompts)
        batches.append(played)
        sequences = [sequence(p.turns) for p in played]
        return {
            "prompt_ids": [p.turns[0].prompt_ids for p in played],
            "completion_ids": [ids for ids, _ in sequences],
            "logprobs": None,
            "env_mask": [mask for _, mask in sequences],
            "occubench_reward": [p.reward for p in played],
        }

    def occubench(completions: list, occubench_reward: list[float], **_: Any) -> list[float]:
        return occubench_reward

    args = GRPOConfig(
        output_dir=str(tmp_path),
        use_cpu=True,
        bf16=False,
        seed=0,
        max_steps=STEPS,
        per_device_train_batch_size=GENERATIONS * len(train),
        num_generations=GENERATIONS,
        max_completion_length=MAX_TURNS * 400,
        learning_rate=1e-2,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=occubench,
        args=args,
        train_dataset=Dataset.from_list([{"prompt": p} for p in train]),
        processing_class=tokenizer,
        rollout_func=rollout_func,
    )
    started = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - started

    steps = [entry for entry in trainer.state.log_history if "reward" in entry]
    for step, played in zip(steps, batches, strict=True):
        print(
            f"\nstep {steps.index(step) + 1}: reward {step['reward']:.3f} "
            f"(std {step['reward_std']:.3f}), loss {step['loss']:.3g}, "
            f"turns {[len(p.turns) for p in played]}, "
            f"rewards {[round(p.reward, 2) for p in played]}"
        )
    print(f"{STEPS} GRPO steps of tasks {trained} (held out: {held_out}) in {seconds:.1f} s")

    assert len(steps) == len(batches) == STEPS
    for step, played in zip(steps, batches, strict=True):
        assert len(played) == GENERATIONS * len(train)  # each prompt's group rolled out
        assert {p.task_id for p in played} == set(trained)  # never the held-out task
        assert math.isfinite(step["loss"])
        mean = sum(p.reward for p in played) / len(played)
        assert step["reward"] == pytest.approx(mean)  # TRL's reward is occubench's
    rollouts = [p for played in batches for p in played]
    multi_turn = [p for p in rollouts if len(p.turns) > 1]
    assert multi_turn and all(len(p.turns) <= MAX_TURNS for p in rollouts)
    for played in multi_turn:  # the policy saw each observation before its next turn
        seen = 0
        for turn, after in zip(played.turns, played.turns[1:], strict=False):
            observations = played.observations[seen : seen + turn.calls]
            seen += turn.calls
            new = after.prompt_text[len(turn.prompt_text) :]
            assert after.prompt_text.startswith(turn.prompt_text)
            assert observations and all(o in new for o in observations)
    assert any(step["reward_std"] > 0 for step in steps)  # a learning signal
    changed = [n for n, p in model.named_parameters() if not torch.equal(before[n], p)]
    assert len(changed) == len(before)  # the updates reached every parameter
