"""``try_call``: one call, the simulator's requests exactly as sent, and what it parsed."""

from __future__ import annotations

import json

import anyio
import pytest
from inspect_ai.model import get_model

from occubench.agent import simulator_prompt
from occubench.authoring import try_call
from occubench.config import ResolvedRun, RunConfig
from occubench.dataset import load_env, reference_suite_dir
from occubench.errors import UsageError
from occubench.simulator import PaperLayout

ENV = "ref_dock_appointment_scheduling"
CALL = '{"load_id": "L-6620"}'


def attempt(args: str = CALL, simulator="occubench/canned", tool="get_load", **settings):
    config = RunConfig(**settings)
    return anyio.run(lambda: try_call(reference_suite_dir(), ENV, tool, args, simulator, config))


def test_the_paper_request_is_the_release_layout_and_the_observation_is_parsed():
    config = RunConfig(protocol="paper")
    result = attempt(protocol="paper")
    (exchange,) = result.exchanges
    system, user = exchange.messages
    assert (system.role, user.role) == ("system", "user")
    env = load_env(reference_suite_dir(), ENV)
    assert system.content == simulator_prompt(ResolvedRun.of(config), env)
    layout = PaperLayout()
    action = layout.action_text("get_load", {"load_id": "L-6620"}, CALL)
    assert user.content == layout.current(action, None).text
    assert result.observation == {"load_id": "L-6620", "pallets": 26, "weight_kg": 18240}
    assert "<predicted_observation>" in exchange.reply and result.error is None


def test_an_unusable_reply_is_re_asked_and_every_request_is_kept():
    observation = {"load_id": "L-6620", "pallets": 26, "weight_kg": 18240}
    replies = ["I think the load is fine.", f"<observation>{json.dumps(observation)}</observation>"]
    simulator = get_model("occubench/replay", outputs=replies, memoize=False)
    result = attempt(simulator=simulator, protocol="occubench")
    first, second = result.exchanges
    assert json.loads(first.messages[-1].content)["name"] == "get_load"
    assert second.messages[-2].content == replies[0]  # the reply it gave, then the re-ask
    assert len(second.messages) == len(first.messages) + 2
    assert result.observation == observation and result.shown == json.dumps(observation)


def test_a_simulator_that_never_answers_is_an_error_with_its_requests():
    simulator = get_model("occubench/replay", outputs=["no observation here"], memoize=False)
    result = attempt(simulator=simulator, protocol="occubench", simulator_retries=1)
    assert result.observation is None and "no usable observation" in (result.error or "")
    assert len(result.exchanges) == 2


def test_arguments_follow_the_protocols_rule_and_an_unknown_tool_is_refused():
    with pytest.raises(UsageError, match="1 problem"):
        attempt('{"load_id": 5}', protocol="occubench")
    loose = attempt('{"load_id": 5}', protocol="paper")  # the paper passes them on
    assert loose.arguments == {"load_id": 5}
    assert '\\"load_id\\": 5' in loose.exchanges[0].messages[-1].content
    with pytest.raises(UsageError, match="has no tool 'nope'; its tools: get_load"):
        attempt(tool="nope")
