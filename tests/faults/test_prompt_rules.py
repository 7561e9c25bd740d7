import pytest
from hypothesis import given
from hypothesis import strategies as st

from occubench.faults import EnvMode, prompt_fault_rules


@pytest.mark.parametrize("mode", ["E0", EnvMode.E0])
def test_e0_adds_no_rules(mode):
    assert prompt_fault_rules(EnvMode(mode), 2, 2) == ""


@pytest.mark.parametrize("mode", ["E1", "E2", "E3"])
def test_zero_faults_add_no_rules(mode):
    assert prompt_fault_rules(EnvMode(mode), 0, 2) == ""


@given(
    st.sampled_from(["E1", "E2", "E3"]),
    st.integers(min_value=1, max_value=9),
    st.integers(min_value=1, max_value=9),
)
def test_rules_state_count_and_duration(mode, fc, fd):
    text = prompt_fault_rules(EnvMode(mode), fc, fd)
    assert f"exactly {fc} fault event" in text
    assert f"lasts {fd} " in text
    assert "transient" in text
    assert "observation JSON" in text
    assert text == prompt_fault_rules(EnvMode(mode), fc, fd)


def test_rules_match_the_mode():
    e1, e2, e3 = (prompt_fault_rules(EnvMode(m), 2, 2) for m in ("E1", "E2", "E3"))
    assert "Explicit faults" in e1 and "Implicit faults" not in e1
    assert "Implicit faults" in e2 and "Explicit faults" not in e2
    assert "Explicit faults" in e3 and "Implicit faults" in e3 and "half" in e3
    assert "retry_after_seconds" in e1 and "null" in e2
    assert "Spread the events" in e1


def test_plural_forms():
    text = prompt_fault_rules(EnvMode.E1, 1, 1)
    assert "exactly 1 fault event " in text and "lasts 1 tool call." in text
    assert "consecutive tool calls" in prompt_fault_rules(EnvMode.E1, 1, 3)


@pytest.mark.parametrize(
    ("args", "message"),
    [(("E9", 1, 1), "E9"), (("E1", -1, 1), "fault_count"), (("E1", 1, 0), "fault_duration")],
)
def test_invalid_arguments_raise(args, message):
    mode, count, duration = args
    with pytest.raises(ValueError, match=message):
        prompt_fault_rules(EnvMode(mode), count, duration)
