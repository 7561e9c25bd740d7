"""The fidelity audit with a world: recorded once, replayed without a simulator call."""

import pytest

from occubench.dataset import reference_suite_dir
from occubench.errors import UsageError
from occubench.fidelity import AuditWorld, run_audit
from occubench.worlds import World, WorldMode, close_shared_worlds
from world_fixtures import Counted


def test_an_audit_replays_its_world_with_the_same_scores_and_no_call(tmp_path):
    path = str(tmp_path / "world")
    first, second = Counted("canned"), Counted("canned")
    recorded = run_audit([first.model()], reference_suite_dir(), world=AuditWorld(path=path))
    close_shared_worlds()
    assert first.calls > 0
    assert len(World.open(path, writable=False).keys()) == first.calls
    replayed = run_audit(
        [second.model()],
        reference_suite_dir(),
        world=AuditWorld(path=path, mode=WorldMode.REPLAY),
    )
    assert second.calls == 0
    assert replayed.simulators[0].score == recorded.simulators[0].score
    assert replayed.simulators[0].errors == []


def test_an_audit_refuses_a_world_it_cannot_replay(tmp_path):
    with pytest.raises(UsageError, match="no world at"):
        run_audit(
            [Counted("canned").model()],
            reference_suite_dir(),
            world=AuditWorld(path=str(tmp_path / "none"), mode=WorldMode.REPLAY),
        )
