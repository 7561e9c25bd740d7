"""Clamp notes: a role's reasoning setting as Inspect's provider sends it (no request made)."""

import pytest
from inspect_ai._util import logger as inspect_logger
from inspect_ai.model import GenerateConfig
from inspect_ai.model._providers.deepseek import DEEPSEEK_EFFORT_MAP

from occubench.config import (
    PRESETS,
    ClampNote,
    ReasoningSetting,
    clamp_notes,
    run_clamp_notes,
)
from occubench.errors import UsageError
from occubench.protocols import Protocol
from occubench.roles import Role


def notes(model: str, **settings) -> list[ClampNote]:
    return clamp_notes(Role.AGENT, model, GenerateConfig(**settings))


def test_deepseek_xhigh_is_sent_as_its_own_scale():
    (note,) = notes("deepseek/deepseek-chat", reasoning_effort="xhigh")
    assert note.sent == DEEPSEEK_EFFORT_MAP["xhigh"]  # Inspect's table, whatever it says
    assert note.setting is ReasoningSetting.REASONING_EFFORT and note.asked == "xhigh"
    assert note.line() == (
        f"agent deepseek/deepseek-chat: reasoning effort xhigh sent as "
        f"{DEEPSEEK_EFFORT_MAP['xhigh']} (Inspect's deepseek provider maps it)"
    )
    assert notes("deepseek/deepseek-chat", reasoning_effort="high") == []  # sent as is


def test_an_effort_the_provider_drops_for_the_model():
    (note,) = notes("openai/gpt-4o", reasoning_effort="high")  # no reasoning options
    assert note.sent is None
    assert note.line() == (
        "agent openai/gpt-4o: reasoning effort high not sent (Inspect's openai provider drops it)"
    )
    assert notes("openai/gpt-5", reasoning_effort="high") == []
    (older,) = notes("anthropic/claude-3-5-haiku-latest", reasoning_effort="low")
    assert older.sent is None


def test_reasoning_tokens_on_providers_without_a_budget():
    for model in ("openai/gpt-5", "deepseek/deepseek-chat"):
        (note,) = notes(model, reasoning_tokens=4096)
        assert note.setting is ReasoningSetting.REASONING_TOKENS and note.sent is None
        assert note.asked == "4096" and "drops it" in note.why
    assert notes("anthropic/claude-sonnet-4-5", reasoning_tokens=4096) == []  # budget_tokens
    assert notes("google/gemini-2.5-flash", reasoning_tokens=4096) == []  # thinking_budget


def test_an_effort_given_as_a_budget_or_a_lower_level():
    (budget,) = notes("anthropic/claude-sonnet-4-5", reasoning_effort="xhigh")
    assert budget.sent is not None and budget.sent.startswith("budget_tokens=")
    (level,) = notes("anthropic/claude-sonnet-4-6", reasoning_effort="xhigh")
    assert level.sent == "high"
    (gemini,) = notes("google/gemini-2.5-flash", reasoning_effort="high")
    assert gemini.sent is not None and gemini.sent.startswith("thinking_budget=")
    (gpt,) = notes("openai/gpt-5", reasoning_effort="max")
    assert gpt.sent == "xhigh"


def test_an_effort_wins_over_a_budget_where_the_provider_takes_one():
    found = notes("anthropic/claude-sonnet-4-6", reasoning_effort="high", reasoning_tokens=4096)
    assert [(n.setting, n.sent) for n in found] == [(ReasoningSetting.REASONING_TOKENS, None)]


def test_none_and_unknown_providers_give_no_notes():
    assert notes("deepseek/deepseek-chat", reasoning_effort="none") == []  # thinking disabled
    assert notes("occubench/careful", reasoning_effort="xhigh") == []  # no request builder
    assert notes("nosuchprovider/model", reasoning_effort="xhigh") == []  # not built
    assert notes("openai/gpt-4o") == []


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"reasoning_tokens": 512}, "thinking budget of 512 tokens"),
        ({"reasoning_tokens": 8192, "max_tokens": 8192}, "less than max_tokens (8192)"),
        ({"reasoning_effort": "high", "max_tokens": 4096}, "less than max_tokens (4096)"),
    ],
)
def test_an_anthropic_budget_out_of_its_range_is_refused(settings, message):
    with pytest.raises(UsageError, match=r"^agent anthropic/claude-sonnet-4-5: .*") as refused:
        notes("anthropic/claude-sonnet-4-5", **settings)
    assert message in str(refused.value) and "\n" not in str(refused.value)


def test_reasoning_tokens_on_claude_4_7_is_inspects_refusal_said_now():
    with pytest.raises(UsageError, match="does not support 'reasoning_tokens'") as refused:
        notes("anthropic/claude-opus-4-7", reasoning_tokens=4096)
    assert "\n" not in str(refused.value)


def test_the_probe_leaves_inspects_warnings_to_the_run():
    before = list(inspect_logger._warned)
    notes("openai/gpt-4o", reasoning_effort="high")  # Inspect warns once per process
    assert inspect_logger._warned == before


def test_a_runs_notes_take_each_roles_max_tokens_from_the_protocol():
    paper = PRESETS[Protocol.PAPER]
    models = {Role.AGENT: "openai/gpt-4o", Role.SIMULATOR: "anthropic/claude-sonnet-4-5"}
    settings = {
        Role.AGENT: GenerateConfig(reasoning_effort="high"),
        Role.SIMULATOR: GenerateConfig(reasoning_tokens=paper.simulator_max_tokens),  # not below
    }
    with pytest.raises(
        UsageError, match=f"^simulator .*max_tokens \\({paper.simulator_max_tokens}"
    ):
        run_clamp_notes(models, settings.__getitem__, paper)
    settings[Role.SIMULATOR] = GenerateConfig(reasoning_tokens=2048)
    found = run_clamp_notes(models, settings.__getitem__, paper)
    assert [(n.role, n.setting) for n in found] == [(Role.AGENT, ReasoningSetting.REASONING_EFFORT)]
