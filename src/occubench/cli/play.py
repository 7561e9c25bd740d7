"""``occubench play``: play one task yourself, as the agent, in the terminal or a browser.

With ``--as simulator`` you write the observations of an agent's calls; with ``--as user``
you are the user of a task with a user brief, talking to the agent ``--agent-model``.

The session is an ordinary run of the task with the agent ``human/NAME`` (``occubench.play``):
same simulator, faults, grading and log, in a new folder under ``--log-dir``, so
``occubench report`` shows the person beside the models and ``inspect view`` shows the
trajectory. The browser interface listens on 127.0.0.1 and prints a link that carries the
session's key (``--url-file`` also writes it to a file only you can read).
"""

from __future__ import annotations

from contextlib import ExitStack
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

import typer

from occubench.cli._common import (
    check_models,
    console,
    exit_with,
    user_errors,
    warn_if_exposed,
)
from occubench.cli._options import AllowedHost, Host, Port, SessionLogDir, VerifierModel
from occubench.cli._settings import with_settings
from occubench.config import RunConfig
from occubench.defaults import DEFAULT_PLAY_LOG_ROOT
from occubench.errors import ExitCode, UsageError
from occubench.roles import Role
from occubench.text import terminal_plain

if TYPE_CHECKING:
    from occubench.dataset import UserBrief
    from occubench.play import PlayResult, PlaySetup, SeatChoice, SeatedSession


class Interface(str, Enum):
    """Where the person plays."""

    TERMINAL = "terminal"
    BROWSER = "browser"


class Seat(str, Enum):
    """The role the person plays (``--as``)."""

    AGENT = "agent"
    """They make the moves; a model simulates."""
    SIMULATOR = "simulator"
    """They write the observations; a model (or a scripted agent, or a program) moves."""
    USER = "user"
    """They are the user of a task with a user brief; a model is the agent, one simulates."""


PLAY_SETTINGS = (
    "dataset",
    "industries",
    "domains",
    "difficulty",
    "env_mode",
    "fault_count",
    "fault_duration",
    "fault_engine",
    "faults",
    "fault_latency",
    "seed",
    "with_plan",
    "state_mode",
    "max_tool_calls",
    "votes",
    "date",
    "cache",
    "protocol",
    "world",
    "world_mode",
    "world_variant",
    "user_turns",
)
"""The run settings a play session takes (the selection draws the task; a person plays it)."""


def _say(text: str, style: str | None = None) -> None:
    console.print(text, style=style, markup=False, highlight=False, soft_wrap=True)


def print_result(result: PlayResult, who: str = "you") -> None:
    """The verdict, the checks and votes, the faults ``who`` met and the log, in the terminal."""
    _say(f"\nVerdict: {result.verdict_text()}", "bold green" if result.passed else "bold red")
    if result.explanation:
        _say(terminal_plain(result.explanation))
    for check in result.checks:
        what = check.get("check") or {}
        state = "passed" if check.get("passed") else "failed"
        detail = f"{what.get('kind', '')} {check.get('detail', '')}"
        _say(f"  check {state}: {terminal_plain(detail)}")
    for vote in result.votes:
        verdict = "correct" if vote.get("is_correct") else "not correct"
        _say(f"  verifier vote: {verdict}: {terminal_plain(vote.get('feedback', ''))}")
    if result.faults:
        _say(f"Faults {who} met ({len(result.faults)}):")
        for fault in result.faults:
            how = "an error instead of the answer" if fault.explicit else "answer changed"
            changes = "; ".join(fault.changes)
            where = f"call {fault.call_index + 1} ({fault.tool})"
            _say(f"  {terminal_plain(where)}: {terminal_plain(fault.kind)}, {how}: ")
            _say(f"    {terminal_plain(changes)}")
    else:
        _say(f"Faults {who} met: none.")
    _say(f"Log: {result.log}")


def _write_link(path: Path, link: str) -> None:
    """Write the start link to ``path`` as a new file readable by its owner only.

    A file there is replaced (never written through: its mode is not kept), a link there
    is replaced itself (its target is left alone): ``files.write_fresh``.
    """
    from occubench.files import write_fresh

    with user_errors():
        try:
            write_fresh(path, link + "\n", mode=0o600)
        except OSError as e:
            raise UsageError(f"cannot write the link to {path}: {e.strerror or e}") from e


PlayerName = Annotated[
    str,
    typer.Option(
        "--name", help="Your name: the session's agent is human/NAME in logs and reports."
    ),
]
PlaySimulator = Annotated[
    str | None,
    typer.Option(help="Simulator (LES) model (as the agent: required; as the simulator: you)."),
]
PlayedSeat = Annotated[
    Seat,
    typer.Option(
        "--as",
        help="agent: you make the moves; simulator: you write each observation of the agent "
        "--agent-model (record them into a world with --world: a gold world); user: you "
        "are the user of a task with a user brief, talking to the agent --agent-model.",
    ),
]
SeatedAgent = Annotated[
    str | None,
    typer.Option(
        help="As the simulator or the user: the agent that runs the task (a model or "
        "scripted agent)."
    ),
]
DraftModel = Annotated[
    str | None,
    typer.Option(help="As the simulator: a model whose observation is offered to accept or edit."),
]
PlayedTask = Annotated[
    int | None,
    typer.Option("--task", help="The task to play (default: one drawn from the selection)."),
]
PickSeed = Annotated[
    int | None, typer.Option(help="Seed of the draw of the task (default: a fresh draw).")
]
PlayInterface = Annotated[
    Interface, typer.Option(help="terminal, or browser (a local page; the link is printed).")
]
LinkFile = Annotated[
    Path | None,
    typer.Option(help="Browser: also write the start link to this file (readable by you only)."),
]
ModelPreflight = Annotated[
    bool,
    typer.Option(help="First send each model a tiny request (a missing key stops here, exit 2)."),
]


@with_settings(RunConfig, only=PLAY_SETTINGS)
def play(
    name: PlayerName,
    simulator_model: PlaySimulator = None,
    seat: PlayedSeat = Seat.AGENT,
    agent_model: SeatedAgent = None,
    draft_model: DraftModel = None,
    verifier_model: VerifierModel = None,
    task_id: PlayedTask = None,
    pick_seed: PickSeed = None,
    ui: PlayInterface = Interface.TERMINAL,
    host: Host = "127.0.0.1",
    port: Port = 0,
    allowed_host: AllowedHost = [],  # noqa: B006 - typer copies a list default
    url_file: LinkFile = None,
    preflight: ModelPreflight = True,
    log_dir: SessionLogDir = DEFAULT_PLAY_LOG_ROOT,
    **settings: Any,
) -> None:
    """Play a task as the agent, in the terminal or a browser; get the run's verdict.

    You see the instruction and the tools, call tools through forms built from their
    schemas, meet the run's faults, and answer. The session is logged as an ordinary
    sample whose agent is human/NAME. With --as user you are the user of a task with a
    user brief instead: you read the brief and the agent's messages, reply, and end the
    conversation (/end, or the page's button); the user model is human/NAME. Exit codes:
    0 graded, 2 bad input, 3 the session ended in an infrastructure error, 130 interrupted.
    """
    from occubench.play import SeatChoice

    browser = ui is not Interface.TERMINAL
    choice = SeatChoice(
        Role(seat.value), name, simulator_model, agent_model, draft_model, verifier_model, browser
    )
    with user_errors():
        choice.models()  # the seats checked before the settings
        session = choice.session(RunConfig.model_validate(settings), log_dir, task_id, pick_seed)
    if preflight:
        _preflight(choice, session.setup.config)
    result = _session(choice, session, _Page(host, port, allowed_host, url_file))
    if result is None:
        _say("Interrupted: the session was not graded.")
        exit_with(ExitCode.INTERRUPTED)
    if ui is Interface.TERMINAL:
        print_result(result, "you" if seat is Seat.AGENT else "the agent")
    if result.passed is None:
        exit_with(ExitCode.SAMPLE_ERRORS)


class _Page(NamedTuple):
    """Where the browser's page is served, and where its link is written."""

    host: str
    port: int
    allowed: list[str]
    url_file: Path | None


def _preflight(choice: SeatChoice, config: RunConfig) -> None:
    """Send each machine role a tiny request first (a missing key stops here, exit 2)."""
    from occubench.scale import preflight_models

    check_models(preflight_models(choice.preflight_roles(), config))


def _session(choice: SeatChoice, session: SeatedSession, page: _Page) -> PlayResult | None:
    """The session at the desk of the person's seat and interface; None when interrupted."""
    from inspect_ai.model import get_model

    from occubench.play import (
        TerminalDesk,
        TerminalSimDesk,
        TerminalTalkDesk,
        page_hosts,
        run_play,
        run_simulate,
        run_user,
    )
    from occubench.scale import stop_signals

    setup, info, brief = session.setup, session.info, session.brief
    with stop_signals() as stop:
        try:
            if choice.seat is Role.SIMULATOR:
                with user_errors():
                    draft = get_model(choice.draft) if choice.draft else None
                    result = run_simulate(setup, TerminalSimDesk(info, console), draft)
            elif not choice.browser and brief is not None:
                with user_errors():
                    result = run_user(setup, TerminalTalkDesk(info, console), brief)
            elif not choice.browser:
                result = run_play(setup, TerminalDesk(info, console))
            else:
                hosts = page_hosts(page.host, page.allowed)
                result = _in_browser(setup, hosts, page.host, page.port, page.url_file, brief)
        except KeyboardInterrupt:
            return None
    if stop.signal is not None and result.passed is None:
        return None
    return result


def _in_browser(
    setup: PlaySetup,
    hosts: list[str],
    host: str,
    port: int,
    url_file: Path | None,
    brief: UserBrief | None = None,
) -> PlayResult:
    """Serve the session's page, run the session, show the verdict until the page closes it.

    With ``brief`` the person is the user of the task (``--as user``), else the agent.
    """
    from occubench.play import BrowserSession, served

    warn_if_exposed(host, "other machines can reach the page; they still need the link's key.")
    page = BrowserSession.of(setup, hosts, brief)
    with ExitStack() as stack:
        with user_errors():  # the port taken, or the address not this machine's
            base = stack.enter_context(served(page.app, host, port))
        link = page.link(base)
        _say(f"Open this link in your browser to play (it holds the session's key):\n  {link}")
        if url_file is not None:
            _write_link(url_file, link)
        result = page.run()
        print_result(result, "you" if brief is None else "the agent")
        if result.passed is None:  # interrupted, or an infrastructure error: no verdict to read
            return result
        _say("The verdict is on the page: end the session there (or press Ctrl-C).")
        try:
            page.desk.wait_closed()
        except KeyboardInterrupt:
            pass  # the session is graded and logged: Ctrl-C only closes the page
    return result
