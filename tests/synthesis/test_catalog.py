from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from occubench.synthesis._catalog import (
    Catalog,
    CatalogError,
    CatalogScenario,
    load_catalog,
)

EXPECTED_INDUSTRY_COUNTS = {
    "Business & Enterprise": 19,
    "Technology & IT": 16,
    "Industrial & Engineering": 12,
    "Transportation & Logistics": 11,
    "Commerce & Consumer": 9,
    "Education & Culture": 8,
    "Healthcare & Life Sciences": 7,
    "Public Service & Governance": 7,
    "Agriculture & Environment": 7,
    "Science & Research": 4,
}


def entry(name: str, **overrides: str) -> dict[str, str]:
    values = {
        "name": name,
        "industry": "Technology & IT",
        "domain": "Site Reliability Engineering",
        "role": "Site Reliability Engineer",
        "description": "Rotates on-call schedules and keeps the paging roster complete.",
    }
    return {**values, **overrides}


def write_yaml(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


USER_FILE = """\
version: 1
scenarios:
  - name: On-Call Roster Maintenance
    industry: Technology & IT
    domain: Site Reliability Engineering
    role: Site Reliability Engineer
    description: >-
      Keeps the paging roster complete and swaps shifts on request.
  - name: Beehive Inspection Scheduling
    industry: Agriculture & Environment
    domain: Apiculture
    role: Apiary Manager
    description: Plans hive inspections around weather and nectar flow.
"""


@pytest.fixture(scope="module")
def builtin() -> Catalog:
    return load_catalog()


# --- the built-in catalog ---------------------------------------------------------------


def test_builtin_has_100_scenarios(builtin: Catalog) -> None:
    assert builtin.version == 1
    assert len(builtin.scenarios) == 100


def test_builtin_industry_counts(builtin: Catalog) -> None:
    assert builtin.counts_by_industry() == EXPECTED_INDUSTRY_COUNTS


def test_builtin_domains(builtin: Catalog) -> None:
    per_domain = Counter(s.domain for s in builtin.scenarios)
    assert len(per_domain) == 65
    assert max(per_domain.values()) <= 3
    industries_of = {
        s.domain: {t.industry for t in builtin.scenarios if t.domain == s.domain}
        for s in builtin.scenarios
    }
    assert all(len(v) == 1 for v in industries_of.values())


def test_builtin_names_unique(builtin: Catalog) -> None:
    names = [s.name for s in builtin.scenarios]
    assert len(set(names)) == len(names)
    assert len({n.casefold() for n in names}) == len(names)


def test_builtin_descriptions_are_one_paragraph(builtin: Catalog) -> None:
    for s in builtin.scenarios:
        assert 120 <= len(s.description) <= 700, s.name
        assert "\n" not in s.description, s.name
        sentences = s.description.count(". ") + 1
        assert 2 <= sentences <= 4, s.name
        assert s.description.endswith("."), s.name


def test_builtin_fields_are_filled(builtin: Catalog) -> None:
    for s in builtin.scenarios:
        assert s.name and s.industry and s.domain and s.role
        assert s.name == s.name.strip()


def test_builtin_only_skips_it_when_asked(tmp_path: Path) -> None:
    user = write_yaml(tmp_path / "mine.yaml", USER_FILE)
    catalog = load_catalog(user, builtin=False)
    assert [s.name for s in catalog.scenarios] == [
        "On-Call Roster Maintenance",
        "Beehive Inspection Scheduling",
    ]
    with pytest.raises(CatalogError, match="no catalog"):
        load_catalog(builtin=False)


# --- merging user files -------------------------------------------------------------------


def test_user_file_adds_entries(tmp_path: Path, builtin: Catalog) -> None:
    user = write_yaml(tmp_path / "mine.yaml", USER_FILE)
    merged = load_catalog(str(user))
    assert len(merged.scenarios) == 102
    assert merged.scenarios[:100] == builtin.scenarios
    assert merged.scenarios[-1].domain == "Apiculture"
    assert merged.counts_by_industry()["Agriculture & Environment"] == 8


def test_duplicate_name_across_files_names_both(tmp_path: Path) -> None:
    first = write_yaml(tmp_path / "first.yaml", USER_FILE)
    second = write_yaml(
        tmp_path / "second.yaml",
        "version: 1\nscenarios:\n"
        "  - name: Beehive Inspection Scheduling\n"
        "    industry: Agriculture & Environment\n"
        "    domain: Apiculture\n"
        "    role: Beekeeper\n"
        "    description: Same name again.\n",
    )
    with pytest.raises(CatalogError) as info:
        load_catalog(first, second, builtin=False)
    message = str(info.value)
    assert "Beehive Inspection Scheduling" in message
    assert str(first) in message and str(second) in message
    assert "scenarios[1]" in message and "scenarios[0]" in message


def test_duplicate_of_builtin_name_names_both_files(tmp_path: Path) -> None:
    user = write_yaml(
        tmp_path / "dup.yaml",
        "version: 1\nscenarios:\n"
        "  - name: Emergency Department Triage\n"
        "    industry: Healthcare & Life Sciences\n"
        "    domain: Emergency Medicine\n"
        "    role: Triage Nurse\n"
        "    description: A second definition.\n",
    )
    with pytest.raises(CatalogError) as info:
        load_catalog(user)
    message = str(info.value)
    assert "duplicate scenario name 'Emergency Department Triage'" in message
    assert "catalog.yaml" in message and str(user) in message


def test_domain_in_two_industries_is_an_error(tmp_path: Path) -> None:
    user = write_yaml(
        tmp_path / "domain.yaml",
        "version: 1\nscenarios:\n"
        "  - name: Ledger Archiving\n"
        "    industry: Technology & IT\n"
        "    domain: Accounting\n"
        "    role: Records Engineer\n"
        "    description: Archives closed ledgers.\n",
    )
    with pytest.raises(CatalogError, match="domain 'Accounting' is in industry") as info:
        load_catalog(user)
    assert str(user) in str(info.value)


# --- malformed files --------------------------------------------------------------------------


def test_missing_role_names_file_entry_and_field(tmp_path: Path) -> None:
    user = write_yaml(
        tmp_path / "bad.yaml",
        "version: 1\nscenarios:\n"
        "  - name: Fine Entry\n"
        "    industry: Science & Research\n"
        "    domain: Glassblowing\n"
        "    role: Scientific Glassblower\n"
        "    description: Repairs lab glassware.\n"
        "  - name: Roleless Entry\n"
        "    industry: Science & Research\n"
        "    domain: Glassblowing\n"
        "    description: Nobody does this.\n",
    )
    with pytest.raises(CatalogError) as info:
        load_catalog(user, builtin=False)
    message = str(info.value)
    assert str(user) in message
    assert "scenarios[1]" in message and "'Roleless Entry'" in message
    assert "role: Field required" in message


def test_wrong_type_names_file_entry_and_field(tmp_path: Path) -> None:
    user = write_yaml(
        tmp_path / "types.yaml",
        "version: 1\nscenarios:\n"
        "  - name: Typed Entry\n"
        "    industry: Science & Research\n"
        "    domain: Glassblowing\n"
        "    role: [Glassblower, Technician]\n"
        "    description: 42\n",
    )
    with pytest.raises(CatalogError) as info:
        load_catalog(user, builtin=False)
    lines = str(info.value).splitlines()
    assert len(lines) == 2
    assert all(line.startswith(f"{user}: scenarios[0] ('Typed Entry'): ") for line in lines)
    assert "role: Input should be a valid string" in lines[0]
    assert "description: Input should be a valid string" in lines[1]


def test_unknown_field_and_non_mapping_entry(tmp_path: Path) -> None:
    user = write_yaml(
        tmp_path / "odd.yaml",
        "version: 1\nscenarios:\n"
        "  - just a string\n"
        "  - name: Extra\n"
        "    industry: Science & Research\n"
        "    domain: Glassblowing\n"
        "    role: Glassblower\n"
        "    description: Has a typo field.\n"
        "    rol: Glassblower\n",
    )
    with pytest.raises(CatalogError) as info:
        load_catalog(user, builtin=False)
    message = str(info.value)
    assert f"{user}: scenarios[0]: entry: " in message
    assert f"{user}: scenarios[1] ('Extra'): rol: Extra inputs are not permitted" in message


def test_blank_field_is_rejected(tmp_path: Path) -> None:
    user = write_yaml(
        tmp_path / "blank.yaml",
        "version: 1\nscenarios:\n"
        "  - name: Blank Role\n"
        "    industry: Science & Research\n"
        "    domain: Glassblowing\n"
        "    role: '   '\n"
        "    description: Whitespace only role.\n",
    )
    with pytest.raises(CatalogError, match=r"scenarios\[0\] \('Blank Role'\): role: "):
        load_catalog(user, builtin=False)


def test_invalid_yaml_names_file_and_line(tmp_path: Path) -> None:
    user = write_yaml(
        tmp_path / "broken.yaml",
        "version: 1\nscenarios:\n  - name: Broken\n    role: [unclosed\n    domain: x\n",
    )
    with pytest.raises(CatalogError) as info:
        load_catalog(user)
    message = str(info.value)
    assert str(user) in message
    assert "not valid YAML" in message
    line = int(message.split("line ")[1].split(":")[0])
    assert 4 <= line <= 6


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- a\n- b\n", "expected a mapping"),
        ("version: 2\nscenarios: []\n", "version: expected 1, got 2"),
        ("version: 1\nscenarios: oops\n", "scenarios: expected a list"),
        ("version: 1\nscenarios: []\nextras: 1\n", "unknown top-level keys: extras"),
    ],
)
def test_bad_top_level_layout(tmp_path: Path, text: str, expected: str) -> None:
    user = write_yaml(tmp_path / "layout.yaml", text)
    with pytest.raises(CatalogError, match=expected) as info:
        load_catalog(user, builtin=False)
    assert str(info.value).startswith(str(user))


def test_missing_file_is_a_catalog_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(CatalogError, match="nope.yaml"):
        load_catalog(missing)


def test_catalog_error_is_a_value_error() -> None:
    assert issubclass(CatalogError, ValueError)


# --- the models ---------------------------------------------------------------------------------


def test_catalog_model_rejects_duplicates_and_split_domains() -> None:
    one = CatalogScenario(**entry("A"))
    with pytest.raises(ValidationError, match="duplicate scenario name 'A'"):
        Catalog(version=1, scenarios=[one, one])
    other = CatalogScenario(**entry("B", industry="Science & Research"))
    with pytest.raises(ValidationError, match="domain 'Site Reliability Engineering'"):
        Catalog(version=1, scenarios=[one, other])


def test_scenario_fields_have_descriptions() -> None:
    for field in CatalogScenario.model_fields.values():
        assert field.description


# --- select -----------------------------------------------------------------------------------


def test_select_without_filters_returns_all(builtin: Catalog) -> None:
    assert builtin.select() == builtin.scenarios


def test_select_by_names_keeps_catalog_order(builtin: Catalog) -> None:
    names = [builtin.scenarios[5].name, builtin.scenarios[2].name]
    picked = builtin.select(names=names)
    assert [s.name for s in picked] == [names[1], names[0]]


def test_select_by_industry_and_domain(builtin: Catalog) -> None:
    health = builtin.select(industries=["Healthcare & Life Sciences"])
    assert len(health) == 7
    accounting = builtin.select(industries=["Business & Enterprise"], domains=["Accounting"])
    assert accounting and all(s.domain == "Accounting" for s in accounting)
    assert builtin.select(industries=["Science & Research"], domains=["Accounting"]) == []


def test_select_unknown_names_error(builtin: Catalog) -> None:
    with pytest.raises(CatalogError) as info:
        builtin.select(names=["Emergency Department Triage", "Dragon Taming", "Moon Mining"])
    message = str(info.value)
    assert "'Dragon Taming'" in message and "'Moon Mining'" in message
    assert "Emergency Department Triage" not in message


def test_select_unknown_industry_or_domain_error(builtin: Catalog) -> None:
    with pytest.raises(CatalogError, match="'Healthcare'"):
        builtin.select(industries=["Healthcare"])
    with pytest.raises(CatalogError, match="'Alchemy'"):
        builtin.select(domains=["Alchemy"])


def test_select_rejects_a_bare_string(builtin: Catalog) -> None:
    with pytest.raises(TypeError):
        builtin.select(names="Emergency Department Triage")  # type: ignore[arg-type]


def test_a_catalog_of_aliases_is_refused_before_it_is_built(tmp_path: Path) -> None:
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 8)]
    user = write_yaml(tmp_path / "laughs.yaml", "\n".join(levels) + "\n")
    with pytest.raises(CatalogError) as info:
        load_catalog(user, builtin=False)
    assert str(user) in str(info.value) and "YAML values" in str(info.value)
