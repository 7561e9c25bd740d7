"""A dataset whose task has a user brief, for the tests of tasks with a user."""

from pathlib import Path

from conftest import make_dataset, tool

BRIEF = {
    "persona": "An importer whose shipment of pallets arrived damaged.",
    "goal": "File a customs claim for the damaged pallets and get the claim reference.",
    "facts": [
        {
            "name": "invoice_number",
            "value": "INV-4471",
            "reveal_when": "asked for the invoice number",
        },
        {"name": "shipment_id", "value": "SHP-208", "reveal_when": "asked for the shipment"},
    ],
    "ends_when": "the agent confirms the claim is filed",
}
"""The user of the test task: two facts the claim needs, told only when asked."""

OPENING = "I need to file a claim for a damaged shipment."


def user_dataset(root: Path, **brief: object) -> Path:
    """One env with a ``file_claim`` tool, one task whose user knows what it needs."""
    return make_dataset(
        root,
        [tool("file_claim", invoice_number="The invoice.", shipment_id="The shipment.")],
        agent_instruction=OPENING,
        user={**BRIEF, **brief},
        checks=[
            {
                "kind": "tool_called",
                "tool": "file_claim",
                "arguments": {"invoice_number": "INV-4471", "shipment_id": "SHP-208"},
            }
        ],
    )
