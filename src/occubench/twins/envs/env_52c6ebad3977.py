"""Twin of ``env_52c6ebad3977``: a vehicle on the bench with a PT-CAN communication fault.

How it reads its config (one ambiguity a line):
- Errors: ``{"error": "<message>"}``; an undefined action is "Action '<name>' not found".
- The prompt's words for invalid parameters are read as a template: they name the bad one.
- No tool needs the engine running; the bus tools answer "No signal" with the ignition OFF.
- The bus tools: ``get_active_dtcs``, ``measure_pt_can_metrics``, ``clear_fault_codes``.
- The scan tool reaches the bus through the gateway: with it isolated, the bus tools fail.
- A component below ``FAULTY_BELOW`` integrity is faulty (the config names no threshold).
- A faulty powered (not isolated) module floods the bus; a faulty battery is low voltage.
- Either keeps the U faults: cleared codes come back after a drive cycle (the prompt's rule).
- The one drive cycle a tool makes is ignition START: it sets the initial U/P codes again.
- ``bus_load_percent`` is free (not in the state): saturated while a module floods, else normal.
- The termination resistance is the state's DLC pin 6-14 value (the CAN pins; determined).
- Battery voltage is free (not in the state): derived from the battery's integrity.
- No alternator in the state: ``alternator_integrity`` is the on-board charger's, free.
- ``repair_component`` sets an integrity entry to 100; it clears no code, ends no isolation.
- The battery is the supply, not a node: ``isolate_node_power`` refuses it.
- The state has no isolation field: the twin keeps a sorted ``isolated_nodes`` list of its
  own, free state (a simulator may keep isolation any way it likes).
- START runs the engine only with fuel and a healthy battery; OFF and ACC stop it; ON keeps it.
- ``clear_fault_codes`` removes every U and P code and keeps the others.
"""

from __future__ import annotations

from typing import Any

from occubench.twins._twin import Answer, Twin, tool

FAULTY_BELOW = 50
"""Integrity (percent) below which the twin counts a component as faulty."""

BATTERY = "battery"
ISOLATED = "isolated_nodes"
SATURATED_LOAD = 88.5
NORMAL_LOAD = 27.5
"""Bus loads the twin answers (free: the state holds none)."""

_CLEARED = ("U", "P")


class VehicleDiagnosticsTwin(Twin):
    """The vehicle with a PT-CAN fault (module doc)."""

    environment = "env_52c6ebad3977"

    def error(self, message: str, code: str | None = None) -> Answer:
        """The config's error shape: ``{"error": "<message>"}``."""
        return Answer(observation={"error": message})

    def unknown_tool(self, tool_name: str) -> Answer:
        """The prompt's words for an undefined action."""
        return self.error(f"Action '{tool_name}' not found")

    def invalid_arguments(self, tool_name: str, problem: str) -> Answer:
        """The prompt's error shape, naming the bad parameter."""
        return self.error(f"Invalid parameters for '{tool_name}': {problem}")

    # The vehicle's condition, read from the state.

    def _integrity(self) -> dict[str, Any]:
        integrity: dict[str, Any] = self.state["component_integrity"]
        return integrity

    def _isolated(self) -> list[str]:
        return list(self.state.get(ISOLATED, []))

    def _low_voltage(self) -> bool:
        return bool(self._integrity().get(BATTERY, 100) < FAULTY_BELOW)

    def _flooding(self) -> list[str]:
        """Powered modules that are faulty (they saturate the bus)."""
        return [
            name
            for name, value in self._integrity().items()
            if name != BATTERY and value < FAULTY_BELOW and name not in self._isolated()
        ]

    def _bus_unreachable(self) -> Answer | None:
        if self.state["ignition_status"] == "OFF":
            return self.error("No signal: ignition is OFF")
        gateways = [n for n in self._isolated() if "gateway" in n.lower()]
        if gateways:
            return self.error(f"No communication with the vehicle: {gateways[0]} is isolated")
        return None

    @tool
    def get_vehicle_status(self, arguments: dict[str, Any]) -> Answer:
        """VIN, ignition position and engine state."""
        return Answer(
            observation={
                "vin": self.state["vin"],
                "ignition_status": self.state["ignition_status"],
                "engine_running": self.state["engine_running"],
            }
        )

    @tool
    def get_power_system_health(self, arguments: dict[str, Any]) -> Answer:
        """Battery voltage (free) and the supply components' integrity."""
        integrity = self._integrity()
        battery = integrity.get(BATTERY, 100)
        free = ["/voltage_v"]
        if "alternator" in integrity:
            charger = integrity["alternator"]
        else:
            charger = integrity.get("on_board_charger", 100)
            free.append("/alternator_integrity")
        return Answer(
            observation={
                "voltage_v": round(11.0 + 1.6 * battery / 100, 1),
                "battery_integrity": battery,
                "alternator_integrity": charger,
            },
            free=free,
        )

    @tool
    def get_component_integrity_report(self, arguments: dict[str, Any]) -> Answer:
        """Every component's integrity as the state holds it."""
        return Answer(observation={"integrity_map": dict(self._integrity())})

    @tool
    def get_active_dtcs(self, arguments: dict[str, Any]) -> Answer:
        """The stored trouble codes (the bus must be reachable)."""
        unreachable = self._bus_unreachable()
        if unreachable is not None:
            return unreachable
        return Answer(observation={"dtc_list": list(self.state["active_dtcs"])})

    @tool
    def measure_pt_can_metrics(self, arguments: dict[str, Any]) -> Answer:
        """Bus load (free: saturated while a powered module is faulty) and termination."""
        unreachable = self._bus_unreachable()
        if unreachable is not None:
            return unreachable
        free = ["/bus_load_percent"]
        resistance = self.state.get("circuit_resistance_ohms", {}).get("dlc_pin6_to_pin14")
        if resistance is None:
            resistance = 60.0
            free.append("/termination_resistance_ohms")
        return Answer(
            observation={
                "bus_load_percent": SATURATED_LOAD if self._flooding() else NORMAL_LOAD,
                "termination_resistance_ohms": resistance,
            },
            free=free,
        )

    @tool
    def repair_component(self, arguments: dict[str, Any]) -> Answer:
        """Restore one component's integrity to 100."""
        name = arguments["component_id"]
        if name not in self._integrity():
            return self.error(f"Component '{name}' not found")
        self._integrity()[name] = 100
        return Answer(observation={"status": "Success", "new_integrity": 100})

    @tool
    def isolate_node_power(self, arguments: dict[str, Any]) -> Answer:
        """Cut or restore one module's power (kept in ``isolated_nodes``)."""
        node, isolated = arguments["node_id"], arguments["is_isolated"]
        if node == BATTERY or node not in self._integrity():
            return self.error(f"Node '{node}' not found")
        nodes = set(self._isolated())
        nodes = nodes | {node} if isolated else nodes - {node}
        if ISOLATED in self.state or nodes:
            self.state[ISOLATED] = sorted(nodes)
        return Answer(
            observation={"node_id": node, "is_isolated": isolated},
            free_state=[f"/{ISOLATED}"] if ISOLATED in self.state else [],
        )

    @tool
    def set_ignition_position(self, arguments: dict[str, Any]) -> Answer:
        """Turn the key; START is a drive cycle (module doc)."""
        position = arguments["position"]
        self.state["ignition_status"] = position
        if position in ("OFF", "ACC"):
            self.state["engine_running"] = False
        elif position == "START":
            fuel = self.state.get("fluid_levels", {}).get("fuel", 0)
            self.state["engine_running"] = bool(fuel > 0 and not self._low_voltage())
            if self._low_voltage() or self._flooding():
                codes = self.state["active_dtcs"]
                for code in self.env.task_initial_state.get("active_dtcs", []):
                    if code.startswith(_CLEARED) and code not in codes:
                        codes.append(code)
        return Answer(observation={"success": True})

    @tool
    def clear_fault_codes(self, arguments: dict[str, Any]) -> Answer:
        """Remove every U and P code."""
        unreachable = self._bus_unreachable()
        if unreachable is not None:
            return unreachable
        codes = self.state["active_dtcs"]
        codes[:] = [code for code in codes if not code.startswith(_CLEARED)]
        return Answer(observation={"status": "Success"})
