"""A session as ``occubench play`` asks for it: who sits where, which task, which page.

The person sits in one seat (a ``Role``: the agent, the simulator or the user); the
models of the other seats come from the options, checked here against the seat.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from fastapi import FastAPI

from occubench.config import RunConfig
from occubench.dataset import UserBrief
from occubench.defaults import DEFAULT_ALLOWED_HOSTS
from occubench.errors import UsageError
from occubench.play._desk import HandOff, TalkHandOff
from occubench.play._human import HUMAN_PROVIDER
from occubench.play._session import PlaySetup, pick_task, run_play, run_user
from occubench.play._turns import PlayInfo, PlayResult
from occubench.play._web import create_play_app, create_user_app
from occubench.roles import Role
from occubench.worlds import WorldMode


def seated(
    seat: Role, name: str, simulator: str | None, agent: str | None
) -> tuple[str, str | None]:
    """The simulator and agent models of a session where the person ``name`` plays ``seat``.

    Raises:
        UsageError: a model missing for the seat, or one given for the person's own seat.
    """
    if seat is Role.AGENT:
        if simulator is None:
            raise UsageError("--simulator-model is required (the person makes the moves)")
        if agent is not None:
            raise UsageError(
                "--agent-model names the agent of --as simulator or --as user; you are the agent"
            )
        return simulator, None
    if seat is Role.USER:
        if agent is None:
            raise UsageError("--as user: name the agent you talk to with --agent-model")
        if simulator is None:
            raise UsageError("--as user: --simulator-model is required (a model simulates)")
        return simulator, agent
    if agent is None:
        raise UsageError("--as simulator: name the agent with --agent-model")
    if simulator is not None:
        raise UsageError("--as simulator: you are the simulator; leave out --simulator-model")
    return f"{HUMAN_PROVIDER}/{name}", agent


@dataclass(frozen=True)
class SeatedSession:
    """A session ready to play: its setup, its header, and the brief of the user's seat."""

    setup: PlaySetup
    info: PlayInfo
    brief: UserBrief | None = None


@dataclass(frozen=True)
class SeatChoice:
    """The options of a session as given: the person, their seat and the other seats' models."""

    seat: Role
    name: str
    simulator: str | None = None
    agent: str | None = None
    draft: str | None = None
    verifier: str | None = None
    browser: bool = False

    def models(self) -> tuple[str, str | None]:
        """The simulator and agent models, the options checked against the seat.

        Raises:
            UsageError: the seats' models as ``seated`` refuses them, a draft model outside
                the simulator's seat, or the simulator's seat in a browser.
        """
        models = seated(self.seat, self.name, self.simulator, self.agent)
        if self.draft is not None and self.seat is not Role.SIMULATOR:
            raise UsageError("--draft-model drafts observations: only with --as simulator")
        if self.seat is Role.SIMULATOR and self.browser:
            raise UsageError("--as simulator is played in the terminal (--ui terminal)")
        return models

    def setup(
        self, base: RunConfig, log_root: str, task_id: int | None, pick_seed: int | None
    ) -> PlaySetup:
        """The session of one task (``task_id``, or one drawn from ``base``'s selection).

        Raises:
            UsageError: the options refused by ``models``, a world the simulator's seat
                would not record into, or no task to play.
            DatasetError: the dataset cannot be loaded.
        """
        simulator, agent = self.models()
        if self.seat is Role.SIMULATOR and base.world and base.world_mode is not WorldMode.RECORD:
            raise UsageError(
                "--as simulator records what you write: --world-mode record (the default)"
            )
        base = base.model_copy(update={"dataset": str(base.dataset_dir().resolve())})
        chosen = pick_task(base, task_id, pick_seed)
        config = base.model_copy(
            update={"task_ids": [chosen], "industries": None, "domains": None, "difficulty": None}
        )
        return PlaySetup(
            player=self.name,
            simulator=simulator,
            verifier=self.verifier,
            config=config,
            log_root=log_root,
            agent_model=agent,
        )

    def session(
        self, base: RunConfig, log_root: str, task_id: int | None, pick_seed: int | None
    ) -> SeatedSession:
        """The session of ``setup``, with its header and, in the user's seat, the brief.

        Raises:
            UsageError: what ``setup`` refuses, or the user's seat on a task without a brief.
            DatasetError: the dataset cannot be loaded or lacks the task.
        """
        setup = self.setup(base, log_root, task_id, pick_seed)
        brief = None
        info = setup.info()
        if self.seat is Role.USER:
            brief = setup.brief()
        return SeatedSession(setup, info, brief)

    def preflight_roles(self) -> dict[Role, str]:
        """The machine roles to try before the session (a person's seat is not tried).

        In the simulator's seat the draft model, if any, stands in for the simulator.
        """
        machine = self.draft if self.seat is Role.SIMULATOR else self.simulator
        return {
            **({Role.SIMULATOR: machine} if machine else {}),
            **({Role.VERIFIER: self.verifier} if self.verifier else {}),
        }


def page_hosts(host: str, allowed: Sequence[str]) -> list[str]:
    """The host names the page answers to: the loopback names, ``host`` and ``allowed``."""
    return list(dict.fromkeys([*DEFAULT_ALLOWED_HOSTS, host, *allowed]))


@dataclass(frozen=True)
class BrowserSession:
    """A session played on a local page: its app, the desk it hands turns over, its key."""

    app: FastAPI
    desk: HandOff | TalkHandOff
    key: str
    session: Callable[[], PlayResult]

    @classmethod
    def of(
        cls, setup: PlaySetup, hosts: Sequence[str], brief: UserBrief | None = None
    ) -> BrowserSession:
        """The page of ``setup``'s session under a new key.

        With ``brief`` the person is the user of the task (``--as user``), else the agent.
        """
        key = secrets.token_urlsafe(24)
        if brief is None:
            play_desk = HandOff()
            app = create_play_app(play_desk, setup.info(), key, hosts)
            return cls(app, play_desk, key, partial(run_play, setup, play_desk))
        talk_desk = TalkHandOff()
        app = create_user_app(talk_desk, setup.info(), key, hosts)
        return cls(app, talk_desk, key, partial(run_user, setup, talk_desk, brief))

    def link(self, base: str) -> str:
        """The start link of the page served at ``base`` (it carries the key)."""
        return f"{base}/start?key={self.key}"

    def run(self) -> PlayResult:
        """Run the session and hand its result to the page."""
        result = self.session()
        self.desk.finish(result)
        return result
