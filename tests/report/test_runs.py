"""The reports of a set of runs: one per comparable group, gold and floors beside them."""

from __future__ import annotations

import pytest

from conftest import run_task
from occubench.errors import UsageError
from occubench.report import (
    GoldAgreement,
    check_breakdowns,
    default_report_dir,
    group_folder,
    left_out,
    report_runs,
)


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    run_task(folder, env_mode="E0", task_ids=[11, 24])
    return folder


def test_one_group_reported_with_the_gold_agreements_of_its_simulators(logs):
    asked = []

    def gold(simulators):
        asked.append(simulators)
        return [GoldAgreement(simulator=s, world="w", entries=2, mean=0.5) for s in simulators]

    runs = report_runs([str(logs)], gold=gold, resamples=50)
    (group,) = runs.groups
    assert asked == [["occubench/echo-simulator"]] and len(runs.rows) == 2
    assert [a.simulator for a in group.report.against_gold] == ["occubench/echo-simulator"]
    assert group.group.rows == runs.rows and group.report.floor == []
    assert left_out(group.report)  # one mode: R is not computed, and the line says why


def test_no_samples_and_an_unknown_breakdown_are_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="no samples in"):
        report_runs([str(tmp_path / "empty")])
    check_breakdowns(["industry", "overall"])
    with pytest.raises(UsageError, match="unknown breakdown colour; use overall"):
        check_breakdowns(["industry", "colour"])


def test_the_files_go_beside_the_first_log_folder_one_folder_per_group(tmp_path):
    folder = default_report_dir([f"{tmp_path}/runs/", "other"])
    assert folder == tmp_path / "runs-report"
    assert default_report_dir([str(tmp_path / "runs" / "a.eval")]) == folder
    assert group_folder(folder, 1, 1) == folder
    assert group_folder(folder, 2, 3) == folder / "group-2"
