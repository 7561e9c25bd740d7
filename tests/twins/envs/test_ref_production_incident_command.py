"""The incident command twin's readings of its config (module doc of the twin)."""

from __future__ import annotations

from twin_envs import reference_twin

ENV = "ref_production_incident_command"


def test_another_service_has_nothing_not_zeros() -> None:
    twin = reference_twin(ENV)
    for tool in ("get_service_health", "list_deployments", "get_error_budget"):
        for service in ("payments", "Checkout"):
            answer = twin.call(tool, {"service": service}).observation
            assert answer == {"error": {"code": "NOT_FOUND", "message": f"no service {service}"}}


def test_the_budget_and_deployments_are_the_services() -> None:
    twin = reference_twin(ENV)
    budget = twin.call("get_error_budget", {"service": "checkout"}).observation
    assert budget["budget_id"] == "EB-checkout" and budget["remaining_minutes"] == 37
    deployments = twin.call("list_deployments", {"service": "checkout"}).observation
    assert [d["deploy_id"] for d in deployments["deployments"]] == ["D-901", "D-902", "D-903"]
