"""What ``occubench regrade`` is given: a protocol's judge layout, the new logs' folder."""

from __future__ import annotations

from occubench.config import PRESETS
from occubench.grading import default_regrade_dir, protocol_layout
from occubench.protocols import Protocol


def test_a_protocols_layout_is_its_presets_verifier_points():
    for protocol in Protocol:
        layout = protocol_layout(protocol)
        points = PRESETS[protocol]
        assert layout.style is points.verifier_messages
        assert layout.max_tokens == (points.verifier_max_tokens or None)


def test_the_new_logs_go_beside_the_first_folder_named_after_the_settings(tmp_path):
    runs = tmp_path / "runs"
    first = default_regrade_dir(f"{runs}/", ["judge", 3])
    assert first.parent == tmp_path and first.name.startswith("runs-regraded-")
    assert default_regrade_dir(str(runs / "a.eval"), ["judge", 3]) == first
    assert default_regrade_dir(str(runs), ["judge", 5]) != first
