"""The scenario catalog: professional settings the synthesis pipeline derives envs from.

The built-in catalog ships as ``catalog.yaml`` in this package. User files have the
same layout and are merged after it::

    version: 1
    scenarios:
      - name: Emergency Department Triage
        industry: Healthcare & Life Sciences
        domain: Emergency Medicine
        role: Triage Nurse
        description: One paragraph on the work, its systems, decisions and constraints.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from occubench.errors import UsageError
from occubench.text import YamlBoundError, bounded_yaml

CATALOG_VERSION = 1
"""The catalog file format version this module reads."""

_TOP_LEVEL_KEYS = {"version", "scenarios"}


class CatalogError(UsageError):
    """A catalog file is unreadable, malformed or conflicts with another; or a bad query."""


class CatalogScenario(BaseModel):
    """One professional scenario: who does which work, with which systems."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    name: str = Field(
        min_length=1, description="Unique scenario name, e.g. 'Emergency Department Triage'."
    )
    industry: str = Field(min_length=1, description="Industry, e.g. 'Technology & IT'.")
    domain: str = Field(
        min_length=1, description="Domain within the industry; belongs to one industry only."
    )
    role: str = Field(min_length=1, description="Job title of who does this work.")
    description: str = Field(
        min_length=1,
        description="One paragraph: the work, its systems and records, decisions, constraints.",
    )


class Catalog(BaseModel):
    """A set of scenarios with unique names, each domain within a single industry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(description="Catalog format version.")
    scenarios: list[CatalogScenario] = Field(description="The scenarios, in file order.")

    @model_validator(mode="after")
    def _check_consistent(self) -> Catalog:
        problems = _conflicts((f"scenarios[{i}]", s) for i, s in enumerate(self.scenarios))
        if problems:
            raise UsageError("; ".join(problems))
        return self

    def select(
        self,
        names: Sequence[str] | None = None,
        industries: Sequence[str] | None = None,
        domains: Sequence[str] | None = None,
    ) -> list[CatalogScenario]:
        """Return the scenarios that pass every given filter, in catalog order.

        Args:
            names: Keep only scenarios with these names.
            industries: Keep only scenarios of these industries.
            domains: Keep only scenarios of these domains.

        Raises:
            CatalogError: A requested name, industry or domain is not in the catalog.

        """
        filters = {"name": names, "industry": industries, "domain": domains}
        wanted: dict[str, set[str]] = {}
        for field, values in filters.items():
            if values is None:
                continue
            if isinstance(values, str):
                raise TypeError(f"select(): {field} filter must be a sequence of strings")
            known = {getattr(s, field) for s in self.scenarios}
            unknown = [v for v in values if v not in known]
            if unknown:
                listed = ", ".join(repr(v) for v in unknown)
                raise CatalogError(f"unknown scenario {field} in catalog selection: {listed}")
            wanted[field] = set(values)
        return [
            s
            for s in self.scenarios
            if all(getattr(s, field) in values for field, values in wanted.items())
        ]

    def counts_by_industry(self) -> dict[str, int]:
        """Return the number of scenarios per industry, in order of first appearance."""
        return dict(Counter(s.industry for s in self.scenarios))


MAX_CATALOG_BYTES = 4 * 1024 * 1024
"""Largest catalog file read (the built-in catalog of 100 scenarios is some 70 kB)."""
MAX_CATALOG_VALUES = 1_000_000
"""Most YAML values in a catalog file (aliases counted at their expanded size)."""
MAX_CATALOG_DEPTH = 32
"""Deepest nesting of a catalog file (the format nests a few levels)."""


def load_catalog(*paths: str | Path, builtin: bool = True) -> Catalog:
    """Load the built-in catalog merged with user catalog files.

    Args:
        *paths: User catalog files, merged in order after the built-in catalog.
        builtin: Include the built-in catalog; ``False`` loads only ``paths``.

    Returns:
        The merged catalog.

    Raises:
        CatalogError: One line per problem, naming the file, the entry and the field.

    """
    sources: list[tuple[str, bytes]] = []
    if builtin:
        resource = resources.files("occubench.synthesis").joinpath("catalog.yaml")
        sources.append((str(resource), resource.read_bytes()))
    for path in paths:
        try:
            with Path(path).open("rb") as handle:
                sources.append((str(path), handle.read(MAX_CATALOG_BYTES + 1)))
        except OSError as exc:
            raise CatalogError(f"{path}: cannot read catalog file: {exc}") from exc
    if not sources:
        raise CatalogError("no catalog to load: builtin=False and no paths given")

    labeled: list[tuple[str, CatalogScenario]] = []
    problems: list[str] = []
    for source, text in sources:
        entries, file_problems = _parse_file(source, text)
        labeled += entries
        problems += file_problems
    problems += _conflicts(labeled)
    if problems:
        raise CatalogError("\n".join(problems))
    return Catalog(version=CATALOG_VERSION, scenarios=[s for _, s in labeled])


def _parse_file(source: str, text: bytes) -> tuple[list[tuple[str, CatalogScenario]], list[str]]:
    """Parse one catalog file into labeled scenarios and problem messages.

    The file is read within bounds (``MAX_CATALOG_BYTES``, ``MAX_CATALOG_VALUES`` with
    aliases at their expanded size, ``MAX_CATALOG_DEPTH``) before any object is built.
    """
    try:
        data: Any = bounded_yaml(
            text,
            source,
            max_bytes=MAX_CATALOG_BYTES,
            max_nodes=MAX_CATALOG_VALUES,
            max_depth=MAX_CATALOG_DEPTH,
        )
    except YamlBoundError as exc:
        return [], [str(exc)]
    if not isinstance(data, dict):
        return [], [f"{source}: expected a mapping with keys 'version' and 'scenarios'"]

    problems: list[str] = []
    unknown_keys = sorted(str(k) for k in set(data) - _TOP_LEVEL_KEYS)
    if unknown_keys:
        problems.append(f"{source}: unknown top-level keys: {', '.join(unknown_keys)}")
    version = data.get("version")
    if isinstance(version, bool) or version != CATALOG_VERSION:
        problems.append(f"{source}: version: expected {CATALOG_VERSION}, got {version!r}")
    raw = data.get("scenarios")
    if not isinstance(raw, list):
        problems.append(f"{source}: scenarios: expected a list of mappings, got {raw!r}")
        return [], problems

    entries: list[tuple[str, CatalogScenario]] = []
    for index, item in enumerate(raw):
        label = f"{source}: scenarios[{index}]"
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            label += f" ({item['name']!r})"
        try:
            entries.append((label, CatalogScenario.model_validate(item)))
        except ValidationError as exc:
            for error in exc.errors():
                field = ".".join(str(part) for part in error["loc"]) or "entry"
                problems.append(f"{label}: {field}: {error['msg']}")
    return entries, problems


def _conflicts(labeled: Iterable[tuple[str, CatalogScenario]]) -> list[str]:
    """Describe repeated names and domains claimed by two industries."""
    first_name: dict[str, str] = {}
    first_domain: dict[str, tuple[str, str]] = {}
    problems: list[str] = []
    for label, scenario in labeled:
        if scenario.name in first_name:
            problems.append(
                f"duplicate scenario name {scenario.name!r}: "
                f"{first_name[scenario.name]} and {label}"
            )
        else:
            first_name[scenario.name] = label
        industry, where = first_domain.setdefault(scenario.domain, (scenario.industry, label))
        if industry != scenario.industry:
            problems.append(
                f"domain {scenario.domain!r} is in industry {industry!r} ({where}) "
                f"and {scenario.industry!r} ({label})"
            )
    return problems
