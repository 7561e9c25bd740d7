"""Comparable groups of runs: a report compares only runs on the same tasks, protocol and judge.

A *run* here is one setup (agent, simulator) in one env mode at one fault setting under
one protocol, graded by one verifier, talking to one simulated user, whatever logs or
shards its samples came from; its *task set* is the set of tasks it has samples of.
Completion rates of runs on different task sets, under different protocols, graded by
different verifiers (a regraded log is graded apart from the log it came from, whatever
its judge), or whose tasks talked to different user models measure different things: a
report puts runs into groups of equal (task set, protocol, grading, user) and reports
each group on its own, never pooling or ranking across groups. Within a group R is
computed per fault setting, from E0-E3 on the same tasks.

A run's *user* is the user model it bound when some sample of it talked to a simulated
user (its task had a ``user`` brief), and none otherwise: tasks without a user never
call the model, so a run that bound one there measures what a run without one does.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from occubench.analysis._metrics import fault_setting, group, setup_of
from occubench.analysis._stats import BASELINE_MODE
from occubench.results import Harness, SampleRow

TaskKey = tuple[str, str]
"""A task: its id and its environment (ids alone repeat across datasets)."""


class RunGroup(BaseModel):
    """Runs that share a task set, a protocol and a grading: comparable with each other."""

    label: str = Field(
        description="What the group is: its task count, ids and protocol (and verifier, "
        "when the rows were graded by more than one)."
    )
    protocol: str = Field(description="The protocol every run of the group followed.")
    tasks: int = Field(description="Tasks in the group's task set.")
    runs: list[str] = Field(description="The group's runs (setup, mode, fault setting).")
    verifier: str | None = Field(
        default=None,
        description="The verifier that graded the group (None: none was bound; the checks "
        "or the simulator judged).",
    )
    regraded: bool = Field(default=False, description="Graded again from other logs' samples.")
    user: str | None = Field(
        default=None,
        description="The user model the group's tasks talked to (None: no task had a user).",
    )
    rows: list[SampleRow] = Field(description="The group's samples.", exclude=True)


Grading = tuple[str, bool, Harness]
"""Who graded a run: its verifier ("" when none was bound), whether it was regraded, and
the harness that ran it (a release run is never grouped with an occubench run)."""


def _grading(row: SampleRow) -> Grading:
    return row.verifier_model or "", row.regraded_from is not None, row.harness


def _grading_label(grading: Grading) -> str:
    verifier, regraded, _ = grading
    judged = f"verifier {verifier}" if verifier else "no verifier bound"
    return judged + (" (regraded)" if regraded else "")


RunKey = tuple[str, str, str, str, str, Grading, str]
"""A run: agent, simulator, env mode, fault setting, protocol, grading and bound user model."""


def _user_label(user: str) -> str:
    return f"user {user}" if user else "no simulated user"


def _run_key(row: SampleRow) -> RunKey:
    agent, simulator = setup_of(row)
    setting = "" if row.env_mode == BASELINE_MODE else fault_setting(row)
    user = row.user_model or ""
    return agent, simulator, row.env_mode, setting, row.protocol, _grading(row), user


def _users(runs: dict[RunKey, list[SampleRow]]) -> dict[RunKey, str]:
    """Each run's user (module doc): its bound user model where a sample talked to a user."""
    return {
        key: key[6] if any(r.user_turns is not None for r in members) else ""
        for key, members in runs.items()
    }


def _ids(tasks: frozenset[TaskKey]) -> str:
    ids = sorted(
        {task_id for task_id, _ in tasks},
        key=lambda t: (not t.isdigit(), int(t) if t.isdigit() else 0, t),
    )
    shown = ", ".join(ids[:6]) + (", ..." if len(ids) > 6 else "")
    return shown


def comparable_groups(rows: Sequence[SampleRow]) -> list[RunGroup]:
    """The rows' runs in groups of equal task set, protocol, grading and user.

    The largest group comes first (of equal ones, a grading made when the runs ran before
    a regrading of them); a group's label names its verifier when the rows were graded
    by more than one, and its user model when the rows' tasks talked to more than one
    (or to one and to none).
    """
    runs = group(rows, _run_key)
    users = _users(runs)
    by_group: dict[tuple[frozenset[TaskKey], str, Grading, str], list[RunKey]] = {}
    for key, members in runs.items():
        tasks = frozenset((str(r.task_id), r.env_name) for r in members)
        by_group.setdefault((tasks, key[4], key[5], users[key]), []).append(key)
    graders = len({grading for _, _, grading, _ in by_group})
    talked = len({user for _, _, _, user in by_group})
    out = []
    for (tasks, protocol, grading, user), keys in by_group.items():
        chosen = set(keys)
        members = [r for r in rows if _run_key(r) in chosen]
        names = [
            f"{agent} @ {simulator} {mode}" + (f" ({setting.rsplit(' ', 1)[0]})" if setting else "")
            for agent, simulator, mode, setting, *_ in keys
        ]
        judged = f", {_grading_label(grading)}" if graders > 1 else ""
        judged += f", {_user_label(user)}" if talked > 1 else ""
        harness = ", the release's harness" if grading[2] is Harness.RELEASE else ""
        out.append(
            RunGroup(
                label=f"{len(tasks)} tasks ({_ids(tasks)}), {protocol} protocol{harness}{judged}",
                protocol=protocol,
                tasks=len(tasks),
                runs=names,
                verifier=grading[0] or None,
                regraded=grading[1],
                user=user or None,
                rows=members,
            )
        )
    return sorted(out, key=lambda g: (-len(g.rows), g.regraded, g.label))
