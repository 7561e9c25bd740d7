"""The checks on a user reply: each catches its flaw and passes a good reply."""

import pytest

from occubench.dataset import UserBrief
from occubench.users import END_MARKER, UserCheck, Utterance, check_user_reply
from user_fixtures import BRIEF, OPENING

brief = UserBrief.model_validate(BRIEF)


def agent(text):
    return [Utterance(speaker="agent", text=text)]


def kinds(conversation, reply, tool_calls=1):
    return {f.check for f in check_user_reply(brief, OPENING, conversation, reply, tool_calls)}


def test_a_fact_given_when_asked_passes():
    assert kinds(agent("What is your invoice number?"), "It is INV-4471.") == set()


def test_a_fact_given_unasked_is_caught():
    assert kinds(agent("Which port did it arrive at?"), "Invoice INV-4471.") == {
        UserCheck.FACT_DISCLOSED
    }


def test_a_fact_said_before_may_be_repeated():
    said = [
        *agent("What is your invoice number?"),
        Utterance(speaker="user", text="INV-4471"),
        *agent("Anything more?"),
    ]
    assert UserCheck.FACT_DISCLOSED not in kinds(said, "Only INV-4471, as I said.")


def test_the_goal_stated_unasked_is_caught_and_asked_for_it_passes():
    leak = "I want a customs claim for the damaged pallets and the claim reference."
    assert kinds(agent("Hello."), leak) == {UserCheck.GOAL_DISCLOSED}
    assert kinds(agent("What would you like me to do?"), leak) == set()
    assert kinds(agent("Which pallets were damaged?"), leak) == set()


def test_an_end_on_a_question_and_before_any_action_are_caught():
    assert kinds(agent("Shall I file it?"), f"Bye.\n{END_MARKER}") == {UserCheck.END_ON_QUESTION}
    assert kinds(agent("I will look into it."), END_MARKER, tool_calls=0) == {
        UserCheck.END_BEFORE_ACTION
    }
    assert kinds(agent("Done: the claim is filed."), f"Thanks.\n{END_MARKER}") == set()


@pytest.mark.parametrize(
    ("reply", "caught"),
    [
        ("My reference is REF-90417.", True),
        ("There were 12 pallets.", True),
        ("The shipment is SHP-208.", False),  # in the brief
        ("I have 2 of them.", False),  # a lone digit is no figure
        ("Claim C-77 is fine.", False),  # the agent said it
    ],
)
def test_figures_outside_the_brief_and_the_conversation_are_caught(reply, caught):
    said = agent("I filed claim C-77 for the shipment. What is the shipment id?")
    assert (UserCheck.INVENTED_FACT in kinds(said, reply)) is caught
