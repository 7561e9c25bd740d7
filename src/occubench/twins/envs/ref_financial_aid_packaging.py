"""Twin of ``ref_financial_aid_packaging``: the reference suite's aid packaging system.

How it reads its config:
- The state holds one student's budget and awards (``ST-40117``) and one grant limit
  (``PELL-2025-26``). Any other student or aid year is NOT_FOUND in the suite's error
  shape ``{"error": {"code": "NOT_FOUND", ...}}``: the prompt says never to invent
  records.
- The grant limit names no aid year field; its year is read from its id, the part after
  the program (``PELL-2025-26`` is aid year ``2025-26``, the canned call's argument).
  Other spellings of the year (``2025-2026``) are other, unknown years.
- ``list_awards`` keeps the state's order, which the tool's description states
  (packaging order); nothing is free, and no total or unmet need is computed (the tools
  return records only).
- Ids match exactly (case and spacing count). The tools only read (nothing is packaged):
  no call changes the state.
"""

from __future__ import annotations

from typing import Any

from occubench.twins._twin import Answer, tool
from occubench.twins.envs._suite import SuiteTwin


class FinancialAidTwin(SuiteTwin):
    """The reference suite's financial aid packaging system (module doc)."""

    environment = "ref_financial_aid_packaging"

    def _student(self, arguments: dict[str, Any]) -> tuple[bool, str]:
        student: str = arguments["student_id"]
        return student == self.state["student_budget"]["student_id"], f"no student {student}"

    @tool
    def get_student_budget(self, arguments: dict[str, Any]) -> Answer:
        """The student's cost of attendance and family contribution."""
        return self.record("student_budget", *self._student(arguments))

    @tool
    def list_awards(self, arguments: dict[str, Any]) -> Answer:
        """The student's awards in packaging order."""
        return self.record("awards", *self._student(arguments))

    @tool
    def get_grant_limit(self, arguments: dict[str, Any]) -> Answer:
        """The grant limit of the aid year its id names."""
        year = arguments["aid_year"]
        _, _, held = str(self.state["grant_limit"]["limit_id"]).partition("-")
        return self.record("grant_limit", year == held, f"no grant limit for aid year {year}")
