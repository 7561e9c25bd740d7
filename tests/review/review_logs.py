"""Logs to review: the reference agents judged by the scripted judge, and a hostile agent.

The replay agent answers at once with an HTML/script payload: its samples show whether
the review page keeps model text as text.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from occubench.task import occubench

PAYLOAD = (
    "Done. <script>document.title='PWNED'</script>"
    "<img src=x onerror=\"document.body.insertAdjacentHTML('beforeend','<p id=pwned>PWNED</p>')\">"
)
AGENTS = ("occubench/careful", "occubench/no-retry")
TASKS = "1001,1002,1004"


def make_review_logs(log_dir: Path, task_ids: str = TASKS) -> Path:
    """E0 and E1 runs of two reference agents and the hostile one, with judge votes."""
    hostile = get_model("occubench/replay", outputs=[PAYLOAD], memoize=False)
    tasks = [
        occubench(dataset="reference", env_mode=mode, with_plan=True, task_ids=task_ids, votes=3)
        for mode in ("E0", "E1")
    ]
    inspect_eval(
        tasks,
        model=[*AGENTS, hostile],
        model_roles={"simulator": "occubench/canned", "verifier": "occubench/scripted-judge"},
        log_dir=str(log_dir),
        max_tasks=2 * (len(AGENTS) + 1),
        display="none",
    )
    return log_dir
