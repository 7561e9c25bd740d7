"""Twin of ``ref_production_incident_command``: the reference suite's observability platform.

How it reads its config:
- The state holds one service's health, deployments and error budget (``checkout``). Any
  other service is NOT_FOUND in the suite's error shape ``{"error": {"code":
  "NOT_FOUND", ...}}``: the prompt says never to invent records, so a service the state
  does not hold has no golden signals, deployments or budget (not zeros, not an empty
  list).
- The error budget names no service field; it is read as the budget of the one service
  the state holds (its id ``EB-checkout`` names it, and the canned call asks for it by
  ``checkout``).
- Service names match exactly (``Checkout`` is another name). ``list_deployments`` keeps
  the state's order, which the tool's description states (oldest first); the "current"
  signals and window are the state's, with no clock: nothing is free.
- The tools only read (nothing is rolled back): no call changes the state.
"""

from __future__ import annotations

from typing import Any

from occubench.twins._twin import Answer, tool
from occubench.twins.envs._suite import SuiteTwin


class IncidentCommandTwin(SuiteTwin):
    """The reference suite's incident management platform (module doc)."""

    environment = "ref_production_incident_command"

    def _service(self, arguments: dict[str, Any]) -> tuple[bool, str]:
        service: str = arguments["service"]
        return service == self.state["service_health"]["service"], f"no service {service}"

    @tool
    def get_service_health(self, arguments: dict[str, Any]) -> Answer:
        """The service's current golden signals."""
        return self.record("service_health", *self._service(arguments))

    @tool
    def list_deployments(self, arguments: dict[str, Any]) -> Answer:
        """The service's recent deployments, oldest first."""
        return self.record("deployments", *self._service(arguments))

    @tool
    def get_error_budget(self, arguments: dict[str, Any]) -> Answer:
        """The error budget of the one service the state holds."""
        return self.record("error_budget", *self._service(arguments))
