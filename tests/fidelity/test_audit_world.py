"""The fidelity audit with a world: recorded once, replayed without a simulator call."""

import pytest
from inspect_ai.model import ModelOutput, get_model

from occubench.dataset import reference_suite_dir
from occubench.errors import UsageError
from occubench.fidelity import AuditWorld, run_audit
from occubench.worlds import World, WorldMode, close_shared_worlds


class Counted:
    """The canned simulator, counting the calls it answers."""

    def __init__(self):
        self.calls = 0
        self.model = get_model("occubench/canned", memoize=False)

    async def __call__(self, input, tools, tool_choice, config):
        self.calls += 1
        out = await self.model.generate(input, tools, tool_choice, config)
        answer = ModelOutput.from_content("mockllm/model", out.completion)
        answer.usage = out.usage
        return answer


def simulator(counter):
    return get_model("mockllm/model", custom_outputs=counter, memoize=False)


def test_an_audit_replays_its_world_with_the_same_scores_and_no_call(tmp_path):
    path = str(tmp_path / "world")
    first, second = Counted(), Counted()
    recorded = run_audit([simulator(first)], reference_suite_dir(), world=AuditWorld(path=path))
    close_shared_worlds()
    assert first.calls > 0
    assert len(World.open(path, writable=False).keys()) == first.calls
    replayed = run_audit(
        [simulator(second)],
        reference_suite_dir(),
        world=AuditWorld(path=path, mode=WorldMode.REPLAY),
    )
    assert second.calls == 0
    assert replayed.simulators[0].score == recorded.simulators[0].score
    assert replayed.simulators[0].errors == []


def test_an_audit_refuses_a_world_it_cannot_replay(tmp_path):
    with pytest.raises(UsageError, match="no world at"):
        run_audit(
            [simulator(Counted())],
            reference_suite_dir(),
            world=AuditWorld(path=str(tmp_path / "none"), mode=WorldMode.REPLAY),
        )
