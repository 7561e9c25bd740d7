"""Twin of ``ref_control_testing_by_audit_sampling``: the reference suite's audit workspace.

How it reads its config:
- The state holds one control (``C-310``), the samples selected for it and one test
  result (sample ``S-03``). Any other control is NOT_FOUND in the suite's error shape
  ``{"error": {"code": "NOT_FOUND", ...}}``: the prompt says never to invent records.
- Samples ``S-01`` and ``S-02`` exist (they are listed) but the state holds no test
  result for them. Their results are read as not recorded, so ``get_test_result``
  answers NOT_FOUND for them as for an unknown sample: a result with a made-up exception
  count would be an invented record, not a free field.
- ``list_samples`` keeps the state's order, which the tool's description states
  (selection order); nothing is free.
- Ids match exactly (case and spacing count). The tools only read: no call changes the
  state.
"""

from __future__ import annotations

from typing import Any

from occubench.twins._twin import Answer, tool
from occubench.twins.envs._suite import SuiteTwin


class AuditSamplingTwin(SuiteTwin):
    """The reference suite's control testing workspace (module doc)."""

    environment = "ref_control_testing_by_audit_sampling"

    @tool
    def get_control(self, arguments: dict[str, Any]) -> Answer:
        """The control's definition, when the state holds it."""
        control = arguments["control_id"]
        named = control == self.state["control"]["control_id"]
        return self.record("control", named, f"no control {control}")

    @tool
    def list_samples(self, arguments: dict[str, Any]) -> Answer:
        """The control's samples in selection order."""
        control = arguments["control_id"]
        named = control == self.state["samples"]["control_id"]
        return self.record("samples", named, f"no control {control}")

    @tool
    def get_test_result(self, arguments: dict[str, Any]) -> Answer:
        """The one recorded test result; any other sample has none."""
        sample = arguments["sample_id"]
        named = sample == self.state["test_result"]["sample_id"]
        return self.record("test_result", named, f"no test result recorded for sample {sample}")
