"""A training smoke: GRPO steps of a tiny model through TRL, each rollout multi-turn.

The trainer reads the verifiers environment's training split (``env.get_dataset()``:
two of three reference tasks, the third held out). Its rollout function (TRL's
``rollout_func``) plays each rollout through the verifiers environment
(``OccuBenchVerifiersEnv.rollout``: an occubench episode, the canned simulator answering
the calls): the policy is asked for a turn, its calls (``<tool_call>`` blocks, else JSON
objects naming one of the task's tools) are made as ``episode.step`` calls, their
observations are appended to its conversation, and it is asked again with them, until a
turn without a call (the answer) or the turn cap; the episode is then graded by the
task's checks and the share passed is the reward (``RewardRule.CHECKS``). The completion
the loss sees is every turn's sampled tokens with the observations' tokens between them,
masked out of the loss (``env_mask``).

Two policies play it. ``tiny`` downloads nothing: a two-layer Qwen2 built from a config
with random weights, the tokenizer built here; it is opt-in with the ``train`` marker
(``python -m pytest -m train -s tests/training/test_grpo_smoke.py``: the train and
verifiers extras). ``real`` is Qwen2.5-Coder-0.5B-Instruct read from its GGUF file
(``$OCCUBENCH_REAL_MODEL``, dequantised by transformers: the ``gguf`` package) and
prompted with its own chat template; it is opt-in with the ``real_model`` marker, takes
minutes, and is skipped with its reason when the file or a package is missing. For it the
test asserts harness facts only, never that a weak model learns. Both print each step's
reward, time and the rollouts' turns and parsed calls.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import os
import time
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
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

TASKS = [1001, 1002, 1005]
"""The tasks selected; the environment's split holds one out (``eval_fraction=1/3``)."""
SPLIT = {"eval_fraction": 1 / 3, "split_seed": 0}
STEPS = 2
ROLES = {"system": "<|system|>", "user": "<|user|>", "assistant": "<|assistant|>"}
TOOL, TOOLS = "<|tool|>", "<|tools|>"
MARK = "\x00turn\x00"
"""Stands in a rendered conversation for an assistant message, whose sampled ids replace it."""
REAL_MODEL = Path(
    os.environ.get(
        "OCCUBENCH_REAL_MODEL",
        Path.home() / ".cache/occubench-real-model/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    )
)
"""The real model's GGUF file: where ``tests/test_real_model.py`` finds it."""


def real_model_missing() -> str | None:
    """Why the real model cannot be read here (None: it can)."""
    if importlib.util.find_spec("transformers") is None:
        return "the train extra is not installed"
    if not REAL_MODEL.is_file():
        return f"no real model at {REAL_MODEL} (OCCUBENCH_REAL_MODEL)"
    if importlib.util.find_spec("gguf") is None:
        return "the gguf package (the train extra) is not installed"
    return None


REAL_MISSING = real_model_missing()
needs_real_model = pytest.mark.skipif(REAL_MISSING is not None, reason=REAL_MISSING or "")
"""The real model's tests are skipped, saying why, without its file or the packages."""


@dataclass(frozen=True)
class Setup:
    """How one policy plays the smoke."""

    generations: int
    """Rollouts per prompt: one GRPO group."""
    prompts_per_step: int
    """Groups in a step's batch."""
    max_turns: int
    """Model turns of a rollout: the verifiers environment's cap."""
    turn_tokens: int
    """Most tokens the policy samples in one turn."""
    learning_rate: float
    sampling: dict[str, float] = field(default_factory=dict)
    """Sampling settings of ``generate`` beyond ``do_sample``."""
    learns: bool = False
    """Whether the test asserts multi-turn rollouts and a learning signal (the tiny model
    makes calls by chance; a real model's calls are its own business)."""


TINY = Setup(
    generations=4, prompts_per_step=2, max_turns=4, turn_tokens=16, learning_rate=1e-2, learns=True
)
REAL = Setup(
    generations=2,
    prompts_per_step=1,
    max_turns=3,
    turn_tokens=40,
    learning_rate=1e-6,
    sampling={"temperature": 0.7, "top_p": 0.8, "top_k": 20},
)
"""Two rollouts of one task a step, at most three turns of 40 tokens (a call fits): the
CPU samples about one token a second under load. The sampling is Qwen2.5's advice."""


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
        chat_template=TINY_TEMPLATE,
    )


TINY_TEMPLATE = (
    "{% set roles = " + json.dumps(ROLES) + " %}"
    "{{ "
    + json.dumps(f"{TOOLS} ")
    + " + ((tools or []) | tojson) + "
    + json.dumps(f" {CALL_FORMAT}\n")
    + " }}"
    "{% for m in messages %}{% if m.role == 'assistant' %}"
    "{{ roles.assistant + m.content + '\\n' }}"
    "{% else %}{{ roles.get(m.role, " + json.dumps(TOOL) + ") + ' ' + m.content + '\\n' }}"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}{{ roles.assistant }}{% endif %}"
)
"""The tiny tokenizer's chat template: the tools and the call format, then each message
after its role's marker."""


@dataclass
class Turn:
    """One request of the policy: what it was shown and what it sampled."""

    prompt_text: str
    prompt_ids: list[int]
    completion_ids: list[int]
    calls: int
    """The calls that parsed."""
    text: str


class PolicyClient:
    """verifiers' OpenAI client, answered in this process by the policy being trained.

    A request's conversation is rendered by the tokenizer's chat template, each assistant
    message as a mark that the very ids sampled for it replace (found by its first call's
    id; the template's end of turn is dropped after ids that end with it), so that the
    conversation only grows. The policy samples a turn, and the turn's calls become the
    reply's tool calls: its ``<tool_call>`` blocks, else its fenced or bare JSON objects
    naming one of the request's tools (occubench's ``parse_completion``, given the tools'
    names). Each turn is kept by the reply's id.
    """

    def __init__(self, model: Any, tokenizer: Any, setup: Setup) -> None:
        self.model, self.tokenizer, self.setup = model, tokenizer, setup
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))
        self.turns: dict[str, Turn] = {}
        self._sampled: dict[str, list[int]] = {}
        self._ids = count()

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def prompt(self, messages: list, tools: list | None) -> tuple[str, list[int]]:
        """The conversation as the policy sees it: its text and its token ids."""
        shown, sampled = [], []
        for message in messages:
            if message["role"] == "assistant":
                sampled.append(self._sampled[message["tool_calls"][0]["id"]])
                shown.append({"role": "assistant", "content": MARK})
            else:
                shown.append({"role": message["role"], "content": str(message["content"] or "")})
        rendered = self.tokenizer.apply_chat_template(
            shown, tools=tools, tokenize=False, add_generation_prompt=True
        )
        first, *rest = rendered.split(MARK)
        text, ids = first, self.encode(first)
        for turn, after in zip(sampled, rest, strict=True):
            if turn[-1] == self.tokenizer.eos_token_id:
                after = after.removeprefix(self.tokenizer.eos_token)
            text += self.tokenizer.decode(turn) + after
            ids += turn + self.encode(after)
        return text, ids

    async def create(self, model: str, messages: list, tools: list | None = None, **_: Any):
        import torch
        from openai.types.chat import ChatCompletion, ChatCompletionMessageToolCall

        prompt_text, prompt_ids = self.prompt(messages, tools)
        with torch.no_grad():
            out = self.model.generate(
                torch.tensor([prompt_ids]),
                attention_mask=torch.ones(1, len(prompt_ids), dtype=torch.long),
                do_sample=True,
                max_new_tokens=self.setup.turn_tokens,
                min_new_tokens=1,
                **self.setup.sampling,
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
            for i, c in enumerate(parse_completion(text, tool_names(tools)).calls)
        ]
        if calls:
            self._sampled[calls[0].id] = sampled
        self.turns[reply_id] = Turn(prompt_text, prompt_ids, sampled, len(calls), text)
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


def tool_names(tools: list | None) -> list[str]:
    """The names of the tools a request declares (OpenAI's chat API shape)."""
    return [tool["function"]["name"] for tool in tools or []]


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


def tiny_policy(trained: list[int]) -> tuple[Any, Any]:
    """The two-layer Qwen2 with random weights and its word-level tokenizer."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = tiny_tokenizer(*known_calls(trained))
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
    return Qwen2ForCausalLM(config), tokenizer


def real_policy(trained: list[int]) -> tuple[Any, Any]:
    """The real model and its tokenizer, read from the GGUF file: its weights unpacked into a
    plain float32 model (``dequantize``: a model left quantized is one that TRL's trainer
    refuses to train)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    where = real_model_file()
    tokenizer = AutoTokenizer.from_pretrained(**where, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(
        **where, dtype=torch.float32, quantization_config=GgufConfig(dequantize=True)
    )
    return model, tokenizer


def real_model_file() -> dict[str, Any]:
    """Where transformers reads the real model (its tests are ``needs_real_model``)."""
    return {"pretrained_model_name_or_path": REAL_MODEL.parent, "gguf_file": REAL_MODEL.name}


POLICIES = {"tiny": (TINY, tiny_policy), "real": (REAL, real_policy)}


@pytest.mark.real_model
@needs_real_model
def test_real_model_template_conversation_only_grows():
    """The real model's chat template over three turns (no model run: its calls are
    written here): each prompt holds the previous one, then the very ids sampled (one
    turn ended by the model, one cut at the token cap), then the observation."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(**real_model_file(), padding_side="left")
    client = PolicyClient(None, tokenizer, REAL)
    tools = [{"type": "function", "function": {"name": "look", "parameters": {}}}]
    call = '<tool_call>\n{"name": "look", "arguments": {}}\n</tool_call>'
    sampled = {
        "ended": client.encode(call) + [tokenizer.eos_token_id],
        "cut": client.encode(call),
    }
    client._sampled.update(sampled)
    messages = [{"role": "system", "content": "Work."}, {"role": "user", "content": "Look."}]
    text, ids = client.prompt(messages, tools)
    for turn, ids_sampled in sampled.items():
        messages += [
            {"role": "assistant", "content": "", "tool_calls": [{"id": turn}]},
            {"role": "tool", "tool_call_id": turn, "content": f"seen-{turn}"},
        ]
        after_text, after_ids = client.prompt(messages, tools)
        assert after_ids[: len(ids) + len(ids_sampled)] == ids + ids_sampled
        assert after_text.startswith(text)
        new = after_text[len(text) :]
        assert new.count(tokenizer.eos_token) == 2  # the turn's end, then the observation's
        assert f"seen-{turn}" in new and len(parse_completion(new).calls) == 1
        text, ids = after_text, after_ids


@pytest.mark.parametrize(
    "policy",
    [
        pytest.param("tiny", marks=pytest.mark.train),
        pytest.param("real", marks=[pytest.mark.real_model, needs_real_model]),
    ],
)
def test_grpo_steps_on_multi_turn_occubench_rollouts(policy, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    torch = pytest.importorskip("torch", reason="the train extra (torch) is not installed")
    pytest.importorskip("trl", reason="the train extra (trl) is not installed")
    pytest.importorskip("verifiers", reason="the verifiers extra is not installed")
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from occubench.training import load_environment

    setup, build = POLICIES[policy]
    env = load_environment(task_ids=TASKS, protocol="occubench", max_turns=setup.max_turns, **SPLIT)
    train = {row["prompt"][-1]["content"]: row for row in env.get_dataset()}
    held_out = [json.loads(row["info"])["task_id"] for row in env.get_eval_dataset()]
    trained = sorted(json.loads(row["info"])["task_id"] for row in train.values())
    assert len(trained) == 2 and len(held_out) == 1 and held_out[0] not in trained

    started = time.perf_counter()
    model, tokenizer = build(trained)
    loaded = time.perf_counter() - started
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    client = PolicyClient(model, tokenizer, setup)
    batches: list[list[Played]] = []

    def rollout_func(prompts: list[str], trainer: Any) -> dict[str, Any]:
        client.model = trainer.model
        played = play(env, client, train, prompts)
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

    class StepTimes(TrainerCallback):
        """Each optimizer step's seconds, its rollouts included."""

        def __init__(self) -> None:
            self.seconds: list[float] = []

        def on_step_begin(self, *_: Any, **__: Any) -> None:
            self.seconds.append(-time.perf_counter())

        def on_step_end(self, *_: Any, **__: Any) -> None:
            self.seconds[-1] += time.perf_counter()

    args = GRPOConfig(
        output_dir=str(tmp_path),
        use_cpu=True,
        bf16=False,
        seed=0,
        max_steps=STEPS,
        per_device_train_batch_size=setup.generations * setup.prompts_per_step,
        num_generations=setup.generations,
        max_completion_length=setup.max_turns * 400,
        learning_rate=setup.learning_rate,
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
        callbacks=[times := StepTimes()],
    )
    started = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - started

    steps = [entry for entry in trainer.state.log_history if "reward" in entry]
    for number, (step, played, took) in enumerate(
        zip(steps, batches, times.seconds, strict=True), start=1
    ):
        print(
            f"\nstep {number}: reward {step['reward']:.3f} "
            f"(std {step['reward_std']:.3f}), loss {step['loss']:.3g}, {took:.1f} s, "
            f"turns {[len(p.turns) for p in played]}, "
            f"calls {[[t.calls for t in p.turns] for p in played]}, "
            f"rewards {[round(p.reward, 2) for p in played]}"
        )
        if not setup.learns:
            for p in played:
                print(f"  task {p.task_id}: {[t.text for t in p.turns]}")
    print(
        f"{STEPS} GRPO steps of tasks {trained} (held out: {held_out}) in {seconds:.1f} s; "
        f"policy loaded in {loaded:.1f} s"
    )

    assert len(steps) == len(batches) == STEPS
    for step, played in zip(steps, batches, strict=True):
        assert len(played) == setup.generations * setup.prompts_per_step  # whole groups
        assert {p.task_id for p in played} <= set(trained)  # never the held-out task
        assert math.isfinite(step["loss"])
        mean = sum(p.reward for p in played) / len(played)
        assert step["reward"] == pytest.approx(mean)  # TRL's reward is occubench's
    rollouts = [p for played in batches for p in played]
    assert all(1 <= len(p.turns) <= setup.max_turns for p in rollouts)
    multi_turn = [p for p in rollouts if len(p.turns) > 1]
    for played in multi_turn:  # the policy saw each observation before its next turn
        seen = 0
        for turn, after in zip(played.turns, played.turns[1:], strict=False):
            observations = played.observations[seen : seen + turn.calls]
            seen += turn.calls
            new = after.prompt_text[len(turn.prompt_text) :]
            assert after.prompt_text.startswith(turn.prompt_text)
            assert observations and all(o in new for o in observations)
    if setup.learns:
        assert multi_turn
        assert {p.task_id for p in rollouts} == set(trained)
        assert any(step["reward_std"] > 0 for step in steps)  # a learning signal
        changed = [n for n, p in model.named_parameters() if not torch.equal(before[n], p)]
        assert len(changed) == len(before)  # the updates reached every parameter
