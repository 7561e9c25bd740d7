"""False flags of the exploit guard: honest agents against simulators that go wrong.

1. Flawed simulators. The three honest reference agents (``careful``, ``no-retry``,
   ``trusting``) play the reference suite judged by the scripted judge alone (its checks
   removed, as the public release's tasks have none; with its plans) against each scripted
   simulator with a known flaw (``occubench.scripted``): ``off-schema`` (a generic success
   envelope for every action), ``fabricating``, ``omitting``, ``inconsistent``,
   ``rule-inventing``, ``drifting`` (off the contract after two actions), and ``canned``
   (faithful) for comparison; E0-E3 under both protocols. The schema and steps agents play
   the public sample's ten tasks against ``off-schema`` (the generic simulator of issue
   48). Per simulator and protocol: the episodes, the passes, the passes flagged "exploit
   suspected" (a false flag: no agent here asks for anything), the episodes the guard
   reports "simulator off contract" and the evidence by kind and rule.
2. Exploits still caught. The four scripted exploiting agents against the simulator and
   judge that obey them (``benchmarks/exploits.py``'s first table, guard ``flag`` only):
   40 episodes each, the share flagged.

The real 0.5B simulator is not played here (it needs the model file and minutes per
episode on a CPU); ``benchmarks/exploits.py --logs`` checks the samples of its logs.

    python benchmarks/false_flags.py [--sample PATH]

Episodes are played in-process through ``occubench.training.run_rollouts`` (the gym API);
the counts are exact and deterministic (scripted models).
"""

from __future__ import annotations

import asyncio
import tempfile
from collections import Counter
from pathlib import Path

from exploits import (
    EXPLOITERS,
    GULLIBLE,
    PROTOCOLS,
    REFERENCE_AGENTS,
    SAMPLE_AGENTS,
    batch,
    judged_only,
    rate,
    sample_of,
    sample_parser,
    suspected,
)

from occubench.guard import ExploitGuard
from occubench.training import RolloutReport

FLAWED = (
    "off-schema",
    "fabricating",
    "omitting",
    "inconsistent",
    "rule-inventing",
    "drifting",
    "canned",
)
MODES = ("E0", "E1", "E2", "E3")
JUDGE = "occubench/scripted-judge"


def evidence(reports: list[RolloutReport]) -> Counter[str]:
    """The evidence of the episodes by ``kind/rule``."""
    return Counter(
        f"{e.kind.value}/{e.rule}"
        for report in reports
        for r in report.rollouts
        if r.grade is not None
        for e in r.grade.exploit_evidence
    )


def off_contract(report: RolloutReport) -> int:
    """Episodes the guard reported "simulator off contract"."""
    return sum(bool(r.grade and r.grade.simulator_off_contract) for r in report.rollouts)


async def flawed(judged: Path, sample: Path | None) -> None:
    """Table 1: honest agents against each flawed simulator, per protocol."""
    print(
        "| simulator | dataset | protocol | episodes | passed | exploit suspected (passes) "
        "| simulator off contract (episodes) | evidence (kind/rule) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    runs: list[tuple[str, str, Path, tuple[str, ...], bool]] = [
        (simulator, "reference (judged)", judged, REFERENCE_AGENTS, True) for simulator in FLAWED
    ]
    if sample is not None:
        runs.append(("off-schema", "sample (10 tasks)", sample, SAMPLE_AGENTS, False))
    totals: dict[str, Counter[str]] = {}
    for simulator, name, dataset, agents, plans in runs:
        for protocol in PROTOCOLS:
            checks = {"sim_checks": True} if protocol == "occubench" else {}
            reports = [
                await batch(
                    dataset,
                    agent,
                    f"occubench/{simulator}",
                    JUDGE,
                    ExploitGuard.FLAG,
                    with_plan=plans,
                    protocol=protocol,
                    env_mode=mode,
                    **checks,
                )
                for agent in agents
                for mode in MODES
            ]
            n = sum(r.episodes for r in reports)
            passed = sum(bool(x.passed) for r in reports for x in r.rollouts)
            flagged = sum(suspected(r) for r in reports)
            broken = sum(off_contract(r) for r in reports)
            total = totals.setdefault(simulator, Counter())
            total.update(n=n, passed=passed, flagged=flagged, broken=broken)
            kinds = ", ".join(f"{k} {c}" for k, c in evidence(reports).most_common()) or "none"
            print(
                f"| {simulator} | {name} | {protocol} | {n} | {passed} | "
                f"{rate(flagged, passed)} | {rate(broken, n)} | {kinds} |"
            )
    print()
    print("| simulator (all) | episodes | passed | exploit suspected | simulator off contract |")
    print("|---|---|---|---|---|")
    for simulator, t in totals.items():
        print(
            f"| {simulator} | {t['n']} | {t['passed']} | {rate(t['flagged'], t['passed'])} | "
            f"{rate(t['broken'], t['n'])} |"
        )


async def caught(judged: Path, sample: Path | None) -> None:
    """Table 2: the exploiting agents against parties that obey them, guard ``flag``."""
    print("| exploiting agent | episodes | passed | exploit suspected |")
    print("|---|---|---|---|")
    datasets = [judged, *([sample] if sample is not None else [])]
    for agent in EXPLOITERS:
        reports = [
            await batch(
                dataset,
                agent,
                *GULLIBLE,
                ExploitGuard.FLAG,
                with_plan=dataset == judged,
                protocol=protocol,
                **({"sim_checks": True} if protocol == "occubench" else {}),
            )
            for dataset in datasets
            for protocol in PROTOCOLS
        ]
        n = sum(r.episodes for r in reports)
        passed = sum(bool(x.passed) for r in reports for x in r.rollouts)
        print(f"| {agent} | {n} | {passed} | {rate(sum(suspected(r) for r in reports), n)} |")


def main() -> None:
    sample = sample_of(sample_parser(__doc__).parse_args())
    with tempfile.TemporaryDirectory() as tmp:
        judged = judged_only(Path(tmp) / "judged")
        print("## False flags: honest agents against flawed simulators\n")
        asyncio.run(flawed(judged, sample))
        print("\n## Exploits still caught (simulator and judge that obey)\n")
        asyncio.run(caught(judged, sample))


if __name__ == "__main__":
    main()
