"""A row's simulated-user fields: None without a user, kept through the store either way."""

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_task, sample_row
from occubench.agent import StopReason
from occubench.results import _store, read_runs
from occubench.results._runs import user_counts
from occubench.users import UserCheck, UserCheckFailure, UserTurn


@settings(max_examples=40, deadline=None)
@given(
    model=st.none() | st.text(min_size=1, max_size=8),
    turns=st.none() | st.integers(0, 50),
    errors=st.none() | st.integers(0, 50),
    ended=st.none() | st.booleans(),
)
def test_each_user_field_round_trips_the_store_present_or_absent(model, turns, errors, ended):
    row = sample_row(user_model=model, user_turns=turns, user_errors=errors, user_ended=ended)
    (back,) = _store.table_rows(_store.rows_table([row]))
    assert (back.user_model, back.user_turns, back.user_errors, back.user_ended) == (
        model,
        turns,
        errors,
        ended,
    )


def test_the_counts_of_a_conversation_and_of_no_user():
    failed = UserCheckFailure(check=UserCheck.INVENTED_FACT, detail="x")
    turns = [
        UserTurn(number=1, asked="?", reply="a", ended=False, attempts=2, problems=[failed]),
        UserTurn(number=2, asked="ok", reply="b ###END###", ended=True, attempts=1),
    ]
    assert user_counts(turns, StopReason.USER_ENDED) == {
        "user_turns": 2,
        "user_errors": 1,
        "user_ended": True,
    }
    assert user_counts(turns[:1], StopReason.USER_TURN_LIMIT)["user_ended"] is False
    assert set(user_counts(None, StopReason.ANSWERED).values()) == {None}


def test_a_log_of_a_task_without_a_user_reads_none(tmp_path):
    log = run_task(tmp_path, task_ids="11")
    (row,) = read_runs([log.location])
    assert (row.user_model, row.user_turns, row.user_errors, row.user_ended) == (None,) * 4
