"""Play a task by hand: a person as the agent (a terminal or a browser) or the simulator.

``run_play`` runs one task through the one runner with ``human/<name>`` as the agent
model (``HumanAPI``): each of its generate calls shows the person the turn at their desk
(``TerminalDesk``, or the browser app over a ``HandOff``) and their move, a tool call made
through a form built from the tool's schema or the final answer, is the output. Faults,
grading and the log are the run's, so reports show human baselines beside models.

``run_simulate`` seats the person as the simulator instead: an agent runs the task and
each of its calls is shown to them (``TerminalSimDesk``), who write the observation.

``run_user`` seats the person as the user of a task with a user brief: an agent runs the
task and each of its messages to the user is shown to them with the brief
(``TerminalTalkDesk``, or the browser app over a ``TalkHandOff``); they reply, and end
the conversation with an action of the desk (the end marker is appended for them).
"""

from occubench.play._desk import HandOff, Phase, TalkHandOff
from occubench.play._form import (
    MAX_FIELD_CHARS,
    FormProblems,
    field_value,
    form_arguments,
    form_fields,
    json_arguments,
    tool_view,
)
from occubench.play._human import (
    HUMAN_PROVIDER,
    PLAYER_NAME,
    Desk,
    HumanAPI,
    human_model,
    move_output,
    turn_of,
)
from occubench.play._seats import BrowserSession, SeatChoice, SeatedSession, page_hosts, seated
from occubench.play._session import PlaySetup, pick_task, run_play, run_simulate, run_user
from occubench.play._simulate import (
    MAX_OBSERVATION_CHARS,
    Exchange,
    PersonLeft,
    SimDesk,
    SimTurn,
    TerminalSimDesk,
    draft_observation,
    observation_problems,
    sim_turn_of,
)
from occubench.play._talk import (
    END_COMMAND,
    MAX_REPLY_CHARS,
    Reply,
    TalkDesk,
    TalkTurn,
    TerminalTalkDesk,
    reply_problems,
    reply_text,
    talk_turn_of,
)
from occubench.play._terminal import TerminalDesk
from occubench.play._turns import (
    Entry,
    EntryKind,
    FieldKind,
    FormField,
    Move,
    PlayInfo,
    PlayResult,
    ToolView,
    Turn,
)
from occubench.play._web import (
    MAX_ANSWER,
    MAX_PLAY_FORM_BYTES,
    create_play_app,
    create_user_app,
    served,
)

__all__ = [
    "BrowserSession",
    "SeatChoice",
    "SeatedSession",
    "page_hosts",
    "seated",
    "END_COMMAND",
    "MAX_REPLY_CHARS",
    "Reply",
    "TalkDesk",
    "TalkHandOff",
    "TalkTurn",
    "TerminalTalkDesk",
    "create_user_app",
    "reply_problems",
    "reply_text",
    "run_user",
    "talk_turn_of",
    "MAX_OBSERVATION_CHARS",
    "Exchange",
    "PersonLeft",
    "SimDesk",
    "SimTurn",
    "TerminalSimDesk",
    "draft_observation",
    "observation_problems",
    "run_simulate",
    "sim_turn_of",
    "MAX_ANSWER",
    "MAX_PLAY_FORM_BYTES",
    "create_play_app",
    "served",
    "HUMAN_PROVIDER",
    "MAX_FIELD_CHARS",
    "PLAYER_NAME",
    "Desk",
    "Entry",
    "EntryKind",
    "FieldKind",
    "FormField",
    "FormProblems",
    "HandOff",
    "HumanAPI",
    "Move",
    "Phase",
    "PlayInfo",
    "PlayResult",
    "PlaySetup",
    "TerminalDesk",
    "ToolView",
    "Turn",
    "field_value",
    "form_arguments",
    "form_fields",
    "human_model",
    "json_arguments",
    "move_output",
    "pick_task",
    "run_play",
    "tool_view",
    "turn_of",
]
