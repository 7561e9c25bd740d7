"""Cost accounting: hand-built rows with known answers, and price files."""

import json

import pytest

from conftest import sample_row
from occubench.costs import PriceError, PriceTable, cost_summary, costs_by, load_prices, row_cost
from occubench.report import summary_tables

PRICES = PriceTable.model_validate(
    {
        "models": {
            "p/agent": {
                "input_per_mtok": 2.0,
                "output_per_mtok": 10.0,
                "cached_input_per_mtok": 0.5,
            },
            "p/sim": {"input_per_mtok": 1.0, "output_per_mtok": 4.0},
        }
    }
)


def row(passed=True, verifier_model=None, run_id="run1", **tokens):
    """tokens: role=(input, output, cache_read, cache_write)."""
    return sample_row(
        log="x.eval",
        run_id=run_id,
        agent_model="p/agent",
        simulator_model="p/sim",
        verifier_model=verifier_model,
        fault_count=0,
        fault_duration=0,
        scenario="s",
        industry="i",
        domain="d",
        passed=passed,
        tokens={r: t[0] + t[1] + t[2] + t[3] for r, t in tokens.items()},
        input_tokens={r: t[0] for r, t in tokens.items()},
        output_tokens={r: t[1] for r, t in tokens.items()},
        input_tokens_cache_read={r: t[2] for r, t in tokens.items()},
        input_tokens_cache_write={r: t[3] for r, t in tokens.items()},
    )


def test_row_cost_by_role():
    r = row(
        agent=(1_000_000, 100_000, 2_000_000, 0),
        simulator=(500_000, 250_000, 0, 0),
        verifier=(100_000, 0, 400_000, 0),
    )
    # agent: 2.0 + 1.0 (output) + 2 x 0.5 (cached) = 4.0
    # simulator: 0.5 + 1.0 = 1.5; verifier = the simulator's model: 0.1 + 0.4 (no cached price)
    assert row_cost(r, PRICES) == pytest.approx(4.0 + 1.5 + 0.5)


def test_cache_writes_are_charged_at_the_input_price():
    assert row_cost(row(simulator=(0, 0, 0, 3_000_000)), PRICES) == pytest.approx(3.0)


def test_missing_price_is_none_unless_the_role_used_nothing():
    priced = row(agent=(1_000_000, 0, 0, 0), verifier=(0, 0, 0, 0), verifier_model="p/judge")
    assert row_cost(priced, PRICES) == pytest.approx(2.0)
    unpriced = row(agent=(1_000_000, 0, 0, 0), verifier=(10, 0, 0, 0), verifier_model="p/judge")
    assert row_cost(unpriced, PRICES) is None
    summary = cost_summary("r", [priced, unpriced], PRICES)
    assert summary.total is None and summary.unpriced_models == ["p/judge"]


def test_per_run_task_and_solved_task():
    rows = [
        row(agent=(1_000_000, 0, 0, 0)),
        row(passed=False, agent=(3_000_000, 0, 0, 0)),
        row(passed=None, run_id="run2", agent=(500_000, 0, 0, 0)),
    ]
    first, second = costs_by(rows, PRICES)
    assert (first.group, first.samples, first.solved) == ("run1", 2, 1)
    assert first.total == pytest.approx(8.0) and first.per_task == pytest.approx(4.0)
    assert first.per_solved_task == pytest.approx(8.0)
    assert second.total == pytest.approx(1.0) and second.per_solved_task is None


def test_summary_tables_add_a_cost_table_when_priced():
    rows = [row(agent=(1_000_000, 0, 0, 0))]
    titles = [t.title for t in summary_tables(rows)]
    assert titles == ["Completion rate by industry", "Tokens and cost by role"]
    tables = {t.title: t for t in summary_tables(rows, PRICES)}
    assert tables["Cost (USD)"].row_count == 1
    by_role = tables["Tokens and cost by role"]
    assert by_role.row_count == 1 and "$2.0000" in list(by_role.columns[-1].cells)


def test_load_prices_yaml_and_json(tmp_path):
    yml = tmp_path / "prices.yaml"
    yml.write_text("models:\n  p/agent: {input_per_mtok: 2, output_per_mtok: 10}\n")
    assert load_prices(yml).models["p/agent"].output_per_mtok == 10.0
    js = tmp_path / "prices.json"
    js.write_text(json.dumps({"models": {"p/sim": {"input_per_mtok": 1, "output_per_mtok": 4}}}))
    assert load_prices(js).models["p/sim"].cached_input_per_mtok is None


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "models:\n  p/a: {input_per_mtok: cheap, output_per_mtok: 1}\n",
            r"models\.p/a\.input_per_mtok",
        ),
        ("models:\n  p/a: {input_per_mtok: 1}\n", r"models\.p/a\.output_per_mtok"),
        ("models:\n  p/a: {input_per_mtok: -1, output_per_mtok: 1}\n", "greater than or equal"),
        ("p/a: {input_per_mtok: 1, output_per_mtok: 1}\n", "'models' key"),
        ("models: [unclosed\n", "not valid YAML"),
    ],
)
def test_load_prices_errors_name_file_and_field(tmp_path, text, expected):
    path = tmp_path / "prices.yaml"
    path.write_text(text)
    with pytest.raises(PriceError, match=expected) as info:
        load_prices(path)
    assert "prices.yaml" in str(info.value)


def test_load_prices_missing_file(tmp_path):
    with pytest.raises(PriceError, match="nowhere.yaml"):
        load_prices(tmp_path / "nowhere.yaml")


def test_a_price_file_of_aliases_or_deep_json_is_refused_before_it_is_built(tmp_path):
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 8)]
    laughs = tmp_path / "prices.yaml"
    laughs.write_text("\n".join(levels) + "\n")
    with pytest.raises(PriceError, match="YAML values"):
        load_prices(laughs)
    deep = tmp_path / "prices.json"
    deep.write_text("[" * 10_000 + "]" * 10_000)
    with pytest.raises(PriceError, match="nested deeper"):
        load_prices(deep)
