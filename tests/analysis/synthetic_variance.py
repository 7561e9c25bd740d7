"""Synthetic runs with known variance components (for the noise-floor tests)."""

from __future__ import annotations

import itertools
import math

import numpy as np

from conftest import sample_row

SPREADS = {"task": 0.2, "simulator": 0.1, "agent": 0.15}
"""Each effect is +-spread with equal chance: its variance is spread squared."""


def majority(q: float, k: int) -> float:
    """P(a strict majority of k votes passes) for a vote pass probability q."""
    return sum(math.comb(k, i) * q**i * (1 - q) ** (k - i) for i in range(k // 2 + 1, k + 1))


def truth(k: int, spreads=SPREADS) -> tuple[dict[str, float], dict[str, float]]:
    """The exact components of one vote and of the verdict (by enumerating the effects).

    On the verdict scale the agent component holds the judge's noise too (each epoch gets
    its own judge round): it is the within-replicate variance of the verdict.
    """
    d1, d2, d3 = spreads["task"], spreads["simulator"], spreads["agent"]
    signs = (-1, 1)
    votes = {
        "task": d1**2,
        "simulator": d2**2,
        "agent": d3**2,
        "verifier": 0.5 - (0.25 + d1**2 + d2**2 + d3**2),
    }
    # verdict-scale conditional means
    by_task = {
        a: np.mean([majority(0.5 + a * d1 + b * d2 + c * d3, k) for b in signs for c in signs])
        for a in signs
    }
    by_rep = {
        (a, b): np.mean([majority(0.5 + a * d1 + b * d2 + c * d3, k) for c in signs])
        for a, b in itertools.product(signs, signs)
    }
    verdict = {
        "task": float(np.var(list(by_task.values()))),
        "simulator": float(np.mean([np.var([by_rep[(a, b)] for b in signs]) for a in signs])),
        # within a replicate: the trajectory's pass chance varies and the votes are drawn
        "agent": float(np.mean([p * (1 - p) for p in by_rep.values()])),
    }
    return votes, verdict


def synthetic_rows(
    tasks: int, sims: int, epochs: int, k: int, seed: int, spreads=SPREADS, agent="a/one"
):
    """Rows of one agent: tasks x simulator seeds x epochs samples with k votes each."""
    rng = np.random.default_rng(seed)
    d1, d2, d3 = spreads["task"], spreads["simulator"], spreads["agent"]
    rows = []
    for t in range(tasks):
        a = rng.choice((-1, 1))
        for s in range(sims):
            b = rng.choice((-1, 1))
            for e in range(epochs):
                q = 0.5 + a * d1 + b * d2 + rng.choice((-1, 1)) * d3
                yes = int(rng.binomial(k, q))
                rows.append(
                    sample_row(
                        agent_model=agent,
                        task_id=t,
                        simulator_seed=s,
                        epoch=e + 1,
                        votes_yes=yes,
                        votes_total=k,
                        passed=2 * yes > k,
                    )
                )
    return rows
