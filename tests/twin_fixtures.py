"""A tiny stateful environment and its twin, written into a test's tmp folder.

``counters``: one counter (``C-1``, open; ``counters=n``: ``C-1`` to ``C-n``);
``get_counter`` reads one, ``close_counter`` closes one (a write that changes one state
field). Its canned observations are ``C-1``'s in the initial state, so the ``canned``
simulator acknowledges the close and then forgets it: a later read says open again, and
in explicit state mode its patch is empty.
"""

from __future__ import annotations

from pathlib import Path

from occubench.dataset import CannedObservation, EnvConfig, Scenario, TaskRecord, write_dataset

ENV = "twin_test_counters"

TWIN_SOURCE = """
from typing import Any

from occubench.twins import Answer, Twin, tool


class CountersTwin(Twin):
    environment = "twin_test_counters"

    def error(self, message: str, code: str | None = None) -> Answer:
        return Answer(
            observation={"error": {"code": code or "NOT_FOUND", "message": message}},
            free=["/error/message"],
        )

    def _counter(self, counter_id: str) -> dict[str, Any] | None:
        return next((c for c in self.state["counters"] if c["counter_id"] == counter_id), None)

    @tool
    def get_counter(self, arguments: dict[str, Any]) -> Answer:
        found = self._counter(arguments["counter_id"])
        if found is None:
            return self.error("no such counter")
        return Answer(observation=dict(found))

    @tool
    def close_counter(self, arguments: dict[str, Any]) -> Answer:
        found = self._counter(arguments["counter_id"])
        if found is None:
            return self.error("no such counter")
        found["status"] = "closed"
        return Answer(observation=dict(found))
"""


def _tool(name: str, description: str) -> dict[str, object]:
    return {
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {"counter_id": {"type": "string"}},
            "required": ["counter_id"],
        },
    }


def write_counters(root: Path, counters: int = 1) -> tuple[Path, Path]:
    """The dataset folder and the twins folder of the counters env, under ``root``."""
    opened = {"counter_id": "C-1", "status": "open"}
    others = [{"counter_id": f"C-{n}", "status": "open"} for n in range(2, counters + 1)]
    env = EnvConfig.model_validate(
        {
            "environment_name": ENV,
            "world_model_system_prompt": "You simulate a counter desk. Unknown ids: NOT_FOUND.",
            "action_set_definitions": [
                _tool("get_counter", "Read a counter."),
                _tool("close_counter", "Close a counter."),
            ],
            "task_initial_state": {"counters": [opened, *others]},
            "state_description": {"counters": "The desk's counters."},
            "canned_observations": [
                CannedObservation(
                    tool="get_counter", arguments={"counter_id": "C-1"}, observation=opened
                ).model_dump(),
                CannedObservation(
                    tool="close_counter",
                    arguments={"counter_id": "C-1"},
                    observation={"counter_id": "C-1", "status": "closed"},
                ).model_dump(),
            ],
        }
    )
    task = TaskRecord(
        task_id=1,
        difficulty_level=1,
        task_scenario_name="Counter Desk",
        agent_instruction="Close counter C-1.",
        env_name=ENV,
        verification_plan="C-1 is closed.",
    )
    scenario = Scenario(category="Tests", domain="Tests", task_scenario_name="Counter Desk")
    data = write_dataset(root / "dataset", [task], [env], [scenario])
    twins = root / "twins"
    twins.mkdir()
    (twins / "counters.py").write_text(TWIN_SOURCE)
    return data, twins
