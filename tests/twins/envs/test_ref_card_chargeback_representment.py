"""The chargeback twin's readings of its config (module doc of the twin)."""

from __future__ import annotations

from occubench.twins import Outcome
from twin_envs import reference_twin

ENV = "ref_card_chargeback_representment"


def test_the_proof_of_delivery_belongs_to_the_one_order() -> None:
    twin = reference_twin(ENV)
    proof = twin.call("get_delivery_confirmation", {"order_id": "O-88410"})
    assert proof.outcome is Outcome.SUCCESS and proof.observation["signatures"] == 1
    other = twin.call("get_delivery_confirmation", {"order_id": "POD-88410"})
    assert other.observation["error"]["code"] == "NOT_FOUND"


def test_ids_match_exactly_and_nothing_is_free() -> None:
    twin = reference_twin(ENV)
    assert twin.call("get_chargeback", {"chargeback_id": "cb-3391"}).outcome is Outcome.ERROR
    events = twin.call("list_shipment_events", {"order_id": "O-88410"})
    assert [e["event_code"] for e in events.observation["events"]] == [
        "PICKUP",
        "HUB",
        "DELIVERED",
    ]
    assert not events.free and not events.changes
