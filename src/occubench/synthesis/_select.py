"""Stage h: filter the instances and pick one difficulty level per scenario.

Filter: an instance is dropped when it is invalid, unsolvable (no run with the plan
passed, after the repairs) or trivial (every scored run without the plan passed).

Selection, per scenario, over the instances that survive the filter: the autonomous
success rate of a level pools the runs without the plan of all its instances
(passed runs / scored runs). The selected level is the one with the lowest rate
strictly between 0 and 1; a tie goes to the higher difficulty. When no level has such
a rate (every level is at 0: solvable with the plan, never alone), the highest such
level is taken, and the reason says so. Levels at 1 are never selected.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field


class LevelRate(BaseModel):
    """Autonomous runs of one difficulty level of a scenario, pooled over its instances."""

    difficulty: int = Field(description="Difficulty level.")
    instances: int = Field(description="Instances of this level that survived the filter.")
    passed: int = Field(description="Runs without the plan that passed.")
    scored: int = Field(description="Runs without the plan that have a verdict.")

    @property
    def rate(self) -> float:
        """Autonomous success rate (0 when nothing was scored)."""
        return self.passed / self.scored if self.scored else 0.0


class Selection(BaseModel):
    """The difficulty level chosen for one scenario, and why."""

    difficulty: int | None = Field(description="The chosen level (None: nothing to choose).")
    reason: str = Field(description="Which rule chose it.")
    levels: list[LevelRate] = Field(description="The rates it was chosen from.")


def pool_levels(items: Iterable[tuple[int, int, int]]) -> list[LevelRate]:
    """Pool ``(difficulty, passed, scored)`` of instances into one rate per level."""
    pooled: dict[int, LevelRate] = {}
    for difficulty, passed, scored in items:
        level = pooled.setdefault(
            difficulty, LevelRate(difficulty=difficulty, instances=0, passed=0, scored=0)
        )
        level.instances += 1
        level.passed += passed
        level.scored += scored
    return [pooled[d] for d in sorted(pooled)]


def _describe(levels: list[LevelRate]) -> str:
    return ", ".join(f"L{x.difficulty} {x.passed}/{x.scored}" for x in levels)


def select_difficulty(levels: list[LevelRate]) -> Selection:
    """The level with the lowest autonomous rate in (0, 1); ties to the harder (module doc)."""
    rates = _describe(levels)
    between = [x for x in levels if 0 < x.rate < 1]
    if between:
        chosen = min(between, key=lambda x: (x.rate, -x.difficulty))
        return Selection(
            difficulty=chosen.difficulty,
            levels=levels,
            reason=f"lowest autonomous rate in (0, 1) ({rates})",
        )
    never = [x for x in levels if x.rate == 0]
    if never:
        chosen = max(never, key=lambda x: x.difficulty)
        return Selection(
            difficulty=chosen.difficulty,
            levels=levels,
            reason=f"no level has an autonomous rate in (0, 1); took the hardest level at 0 "
            f"({rates})",
        )
    return Selection(
        difficulty=None,
        levels=levels,
        reason=f"no level left to choose from ({rates or 'no instances'})",
    )
