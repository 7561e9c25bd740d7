"""The browser desk: a local web app (FastAPI) where a person plays one session.

``occubench play --ui browser`` serves it on 127.0.0.1 and prints a link that carries
the session's key (``/start?key=...``): opening it exchanges the key for a session
cookie signed for this process, once (the key is spent: a copy of the link, in a file or a
shell history, opens nothing later); every other page answers only that cookie. The pages
are rendered with jinja2, autoescape on (the task, the system prompt and the simulator's
observations are shown as text), and no page runs a script: a page that waits for the
environment reloads itself with a ``refresh`` meta tag.

What the app trusts: nothing in a request. The rules of ``occubench.webapp`` apply to
every request (host names, a body cap of ``MAX_PLAY_FORM_BYTES``, security headers with
no script allowed) and every form (its token matches the token cookie, the browser's
Origin is the app's own); cookies are named for this session, so that two sessions, or
the review app on another port of the same host, never mix theirs. A move is accepted
only for the turn that waits for it (``HandOff.give``): a form sent twice, or from a page
of an earlier turn, changes nothing. The arguments pass the form's reading and the
protocol's rule (``occubench.play._form``) before the move is handed over.

A person in the user's seat gets the same app with a page of their own
(``create_user_app``: the brief, the conversation, the agent's message and the reply's
form, ``talk.html.j2``), under the same rules.

The pages are a turn (``turn.html.j2``), a wait, the verdict and a message; the pieces
that show a call and take a JSON object typed in (``parts.html.j2``) are the ones a page
asking a person to answer as the simulator would reuse.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import ClassVar, Generic

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.concurrency import run_in_threadpool

from occubench.defaults import DEFAULT_ALLOWED_HOSTS
from occubench.errors import UsageError
from occubench.play._desk import HandOff, MoveT, Phase, TalkHandOff, TurnT, _SharedDesk
from occubench.play._form import FormProblems, form_arguments, json_arguments
from occubench.play._talk import MAX_REPLY_CHARS, Reply, TalkTurn, reply_problems
from occubench.play._turns import Move, PlayInfo, PlayResult, Turn
from occubench.users import Utterance
from occubench.webapp import FormError, FormGuard, Signer, guarded_app, set_cookie

MAX_PLAY_FORM_BYTES = 256_000
"""Largest request body read (a JSON argument, or an answer, of some pages)."""
MAX_ANSWER = 20_000
"""Longest final answer taken."""
SETTLE_SECONDS = 10.0
"""How long a page waits for the environment before it shows a page that reloads itself."""
STALE = "That form was for an earlier move: nothing was sent."
_ARGUMENT = "arg."
"""Prefix of a tool form's argument fields (apart from its own fields: token, turn, tool)."""


def _pretty(text: str) -> str:
    """An observation's text, indented when it is JSON (as text: the template escapes it)."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (json.JSONDecodeError, RecursionError):
        return text


def _environment() -> Environment:
    environment = Environment(
        loader=PackageLoader("occubench.play", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["pretty"] = _pretty
    return environment


def _turn_number(fields: dict[str, str]) -> int:
    text = fields.get("turn", "")
    return int(text) if text.isdigit() and len(text) < 10 else 0


class _Pages(Generic[TurnT, MoveT]):
    """What every play app shares: its guard, the session's cookie, the start link, pages.

    A seat (``_AgentSeat``, ``_UserSeat``) adds its own pages: the turn that waits for the
    person (``asking``), the verdict (``verdict``), the texts of its waits (``WAITING``) and
    its moves (``add_moves``); ``current`` shows whichever page fits where the session is now.

    Args:
        desk: The session's shared desk.
        info: The session's header.
        key: The session's secret (the start link carries it).
        hosts: Host names requests may be addressed to.
        settle: Seconds a page waits for the environment before showing a wait instead.
    """

    WAITING: ClassVar[Mapping[Phase, str]]
    """What a page says while the session waits in each of the busy phases."""

    def __init__(
        self,
        desk: _SharedDesk[TurnT, MoveT],
        info: PlayInfo,
        key: str,
        hosts: Sequence[str],
        settle: float,
    ) -> None:
        self.desk, self.info, self.settle = desk, info, settle
        self.app = guarded_app("occubench play", hosts, MAX_PLAY_FORM_BYTES)
        self.templates = _environment()
        stylesheet = self.templates.get_template("play.css").render()
        session = secrets.token_hex(6)
        self.session = session
        self.session_cookie = f"occubench_play_{session}"
        self.guard = FormGuard(f"occubench_play_token_{session}")
        self.signer = Signer()
        entered = threading.Lock()
        spent: list[bool] = [False]

        @self.app.get("/play.css")
        def css() -> Response:
            return Response(stylesheet, media_type="text/css")

        @self.app.get("/start")
        def start(request: Request) -> Response:
            if self.admitted(request):  # the browser that opened it, opening it again
                return RedirectResponse("/", status_code=303)
            given = request.query_params.get("key", "")
            if not hmac.compare_digest(given.encode(), key.encode()):
                return self.refused(request)
            with entered:  # the key opens the session once: a copy of the link is worth nothing
                if spent[0]:
                    return self.message(
                        request,
                        403,
                        "This link was used",
                        "The start link opens its session once, in the browser that opened it "
                        "first. Go on there.",
                        error=True,
                        back=False,
                    )
                spent[0] = True
            response = RedirectResponse("/", status_code=303)
            set_cookie(response, self.session_cookie, self.signer.sign(session))
            self.guard.issue(response)
            return response

    def admitted(self, request: Request) -> bool:
        """The request carries this session's signed cookie."""
        return self.signer.verify(request.cookies.get(self.session_cookie, "")) == self.session

    def page(
        self, request: Request, name: str, status: int = 200, *, refresh: int = 0, **context: object
    ) -> Response:
        """A page rendered with the session's header and a form token."""
        token, fresh = self.guard.token_for(request)
        context.setdefault("turn_number", None)
        context.setdefault("conversation", None)
        context.setdefault("page_id", "page-" + name.removesuffix(".html.j2"))
        html = self.templates.get_template(name).render(
            info=self.info, token=token, refresh=refresh, **context
        )
        response = HTMLResponse(html, status_code=status)
        if fresh:
            self.guard.issue(response, token)
        return response

    def message(
        self, request: Request, status: int, heading: str, text: str, *, error: bool, back: bool
    ) -> Response:
        """A page of one message."""
        return self.page(
            request,
            "message.html.j2",
            status,
            heading=heading,
            message=text,
            error=error,
            back=back,
        )

    def refused(self, request: Request) -> Response:
        """The answer to a request without the session's cookie."""
        return self.message(
            request,
            403,
            "Not this session's",
            "Open the link `occubench play` printed when it started this session.",
            error=True,
            back=False,
        )

    def ended(self, request: Request, result: PlayResult | None) -> Response:
        """The page of a session the person ended."""
        return self.message(
            request,
            200,
            "Session ended",
            "You may close this page." + (f" Verdict: {result.verdict_text()}." if result else ""),
            error=False,
            back=False,
        )

    def asking(self, request: Request, turn: TurnT, status: int, notice: str | None) -> Response:
        """The page of ``turn``, which waits for the person (``notice``: why it is shown)."""
        raise NotImplementedError

    def verdict(self, request: Request, turn: TurnT | None, result: PlayResult) -> Response:
        """The page of the verdict (``turn``: the last one, if any)."""
        raise NotImplementedError

    def waiting_turn(self, turn: TurnT | None) -> Turn | None:
        """The turn a waiting page shows (none, unless a seat shows its last one)."""
        return None

    def current(self, request: Request, notice: str | None = None, status: int = 200) -> Response:
        """The page of where the session is now (``notice``: why it is shown instead)."""
        phase, turn, result = self.desk.view()
        if phase is Phase.ASKING and turn is not None:
            return self.asking(request, turn, status, notice)
        if phase is Phase.DONE and result is not None:
            return self.verdict(request, turn, result)
        if phase is Phase.CLOSED:
            return self.ended(request, result)
        message, shown = self.WAITING[phase], self.waiting_turn(turn)
        return self.page(request, "waiting.html.j2", status, refresh=1, message=message, turn=shown)

    def add_form(
        self, name: str, handle: Callable[[Request, dict[str, str]], Awaitable[Response]]
    ) -> None:
        """The route ``/name``: a form of this session, handed to ``handle`` (else refused)."""

        async def route(request: Request) -> Response:
            fields = await self.posted(request)
            if isinstance(fields, Response):
                return fields
            return await handle(request, fields)

        self.app.add_api_route(f"/{name}", route, methods=["POST"], name=name)

    def add_move(
        self, name: str, read: Callable[[Request, TurnT, dict[str, str]], MoveT | Response]
    ) -> None:
        """The route ``/name``: the move ``read`` finds in a form, handed over for its turn.

        A form of an earlier move (its turn no longer waits) changes nothing: it shows where
        the session is now; a form ``read`` refuses shows its page again.
        """

        async def move(request: Request, fields: dict[str, str]) -> Response:
            phase, turn, _ = self.desk.view()
            number = _turn_number(fields)
            if phase is not Phase.ASKING or turn is None or turn.number != number:
                return self.current(request, STALE, 409)
            found = read(request, turn, fields)
            if isinstance(found, Response):
                return found
            if not self.desk.give(number, found):
                return self.current(request, STALE, 409)
            response = RedirectResponse("/", status_code=303)
            await self.settled()
            return response

        self.add_form(name, move)

    def routed(self) -> FastAPI:
        """The app with every route: the start link, where the session is, moves, the end."""
        self.add_home()
        self.add_moves()
        self.add_close()
        return self.app

    def add_moves(self) -> None:
        """The routes of the seat's moves (``add_move``)."""
        raise NotImplementedError

    def add_home(self) -> None:
        """The route of the page of where the session is now."""

        @self.app.get("/", response_class=HTMLResponse)
        async def home(request: Request) -> Response:
            if not self.admitted(request):
                return self.refused(request)
            await self.settled()
            return self.current(request)

    def add_close(self) -> None:
        """The route that ends the session."""

        async def close(request: Request, fields: dict[str, str]) -> Response:
            self.desk.close()
            return self.current(request)

        self.add_form("close", close)

    async def settled(self) -> None:
        """Wait (a while) for the environment, so that the next page is rarely a wait."""
        await run_in_threadpool(self.desk.settled, self.settle)

    async def posted(self, request: Request) -> dict[str, str] | Response:
        """The form's fields, or the page that refuses it."""
        if not self.admitted(request):
            return self.refused(request)
        try:
            return await self.guard.form(request)
        except FormError as e:
            return self.message(request, 400, "Not done", str(e), error=True, back=True)


def create_play_app(
    desk: HandOff,
    info: PlayInfo,
    key: str,
    hosts: Sequence[str] = DEFAULT_ALLOWED_HOSTS,
    settle: float = SETTLE_SECONDS,
) -> FastAPI:
    """The play app for one session at ``desk``, entered with ``key`` (module doc).

    Args:
        desk: The session's shared desk.
        info: The session's header.
        key: The session's secret (the start link carries it).
        hosts: Host names requests may be addressed to.
        settle: Seconds a page waits for the environment before showing a wait instead.
    """
    return _AgentSeat(desk, info, key, hosts, settle).routed()


def create_user_app(
    desk: TalkHandOff,
    info: PlayInfo,
    key: str,
    hosts: Sequence[str] = DEFAULT_ALLOWED_HOSTS,
    settle: float = SETTLE_SECONDS,
) -> FastAPI:
    """The app of a person in the user's seat at ``desk``, entered with ``key`` (module doc).

    A turn's page shows the brief, the conversation and the agent's message, and takes the
    reply: ``Send`` hands it over, ``End the conversation`` hands it over as the last words
    (the end marker appended for the person; typed in the reply, it is refused). Arguments
    as ``create_play_app``'s.
    """
    return _UserSeat(desk, info, key, hosts, settle).routed()


class _AgentSeat(_Pages[Turn, Move]):
    """The pages and moves of a person in the agent's seat: tool calls and the answer."""

    WAITING = {
        Phase.STARTING: "The environment is starting",
        Phase.WORKING: "The environment is answering your call",
        Phase.GRADING: "Your answer is being graded",
    }

    def turn_page(
        self,
        request: Request,
        turn: Turn,
        status: int = 200,
        *,
        chosen: str | None = None,
        values: dict[str, str] | None = None,
        problems: Sequence[str] = (),
        answer: str = "",
        answer_problem: str | None = None,
        notice: str | None = None,
    ) -> Response:
        """The page of ``turn``: its tools' forms and the answer's, as the person left them."""
        return self.page(
            request,
            "turn.html.j2",
            status,
            turn=turn,
            turn_number=turn.number,
            chosen=chosen,
            values=values or {},
            problems=list(problems),
            answer=answer,
            answer_problem=answer_problem,
            notice=notice,
            max_answer=MAX_ANSWER,
        )

    def asking(self, request: Request, turn: Turn, status: int, notice: str | None) -> Response:
        """The turn's page."""
        return self.turn_page(request, turn, status, notice=notice)

    def verdict(self, request: Request, turn: Turn | None, result: PlayResult) -> Response:
        """The verdict under the last turn."""
        return self.page(request, "verdict.html.j2", turn=turn, result=result)

    def waiting_turn(self, turn: Turn | None) -> Turn | None:
        """The last turn stays in view while the environment works."""
        return turn

    def call_of(self, request: Request, turn: Turn, fields: dict[str, str]) -> Move | Response:
        """The tool call a form describes, or its page again with every problem."""
        tool = turn.tool(fields.get("tool", ""))
        if tool is None:
            return self.turn_page(request, turn, 400, notice="No such tool in this environment.")
        values = {
            k.removeprefix(_ARGUMENT): v for k, v in fields.items() if k.startswith(_ARGUMENT)
        }
        raw = fields.get("json", "")
        checks = self.info.checks_arguments
        try:
            if raw.strip():
                arguments = json_arguments(tool, raw, checks)
            else:
                arguments = form_arguments(tool, values, checks)
        except FormProblems as problems:
            kept = {**values, **({"json": raw} if raw.strip() else {})}
            return self.turn_page(
                request, turn, 400, chosen=tool.name, values=kept, problems=problems.problems
            )
        return Move(tool=tool.name, arguments=arguments)

    def answer_of(self, request: Request, turn: Turn, fields: dict[str, str]) -> Move | Response:
        """The final answer (or giving up) a form describes, or its page again with why not."""
        text = fields.get("answer", "").strip()
        if fields.get("action") == "give_up":
            text = ""
        elif not text:
            return self.turn_page(request, turn, 400, answer_problem="Write an answer, or give up.")
        elif len(text) > MAX_ANSWER:
            return self.turn_page(
                request,
                turn,
                400,
                answer=text[:MAX_ANSWER],
                answer_problem=f"An answer holds at most {MAX_ANSWER} characters.",
            )
        return Move(answer=text)

    def add_moves(self) -> None:
        """The routes of a tool call and of the answer."""
        self.add_move("call", self.call_of)
        self.add_move("answer", self.answer_of)


class _UserSeat(_Pages[TalkTurn, Reply]):
    """The pages and replies of a person in the user's seat."""

    WAITING = {
        Phase.STARTING: "The environment is starting",
        Phase.WORKING: "The agent is working on your reply",
        Phase.GRADING: "The conversation is over: the agent's work is being graded",
    }

    def talk_page(
        self,
        request: Request,
        turn: TalkTurn,
        status: int = 200,
        *,
        reply: str = "",
        problems: Sequence[str] = (),
        notice: str | None = None,
    ) -> Response:
        """The page of ``turn``: the brief, the conversation, the agent's message, the reply."""
        return self.page(
            request,
            "talk.html.j2",
            status,
            turn=turn,
            turn_number=turn.number,
            reply=reply,
            problems=list(problems),
            notice=notice,
            max_reply=MAX_REPLY_CHARS,
        )

    def asking(self, request: Request, turn: TalkTurn, status: int, notice: str | None) -> Response:
        """The turn's page."""
        return self.talk_page(request, turn, status, notice=notice)

    def verdict(self, request: Request, turn: TalkTurn | None, result: PlayResult) -> Response:
        """The verdict under the whole conversation."""
        said = []
        if turn is not None:
            said = [*turn.conversation, Utterance(speaker="agent", text=turn.message)]
        return self.page(request, "verdict.html.j2", turn=None, result=result, conversation=said)

    def reply_of(
        self, request: Request, turn: TalkTurn, fields: dict[str, str]
    ) -> Reply | Response:
        """The reply a form describes (``action=end``: the last words), or its page again."""
        text = fields.get("reply", "").strip()
        end = fields.get("action") == "end"
        problems = reply_problems(text, end)
        if problems:
            return self.talk_page(
                request, turn, 400, reply=text[:MAX_REPLY_CHARS], problems=problems
            )
        return Reply(text=text, end=end)

    def add_moves(self) -> None:
        """The route of a reply."""
        self.add_move("reply", self.reply_of)


@contextmanager
def served(app: FastAPI, host: str, port: int) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a thread; yields its base URL, stops the server after.

    Raises:
        UsageError: the address cannot be listened on (uvicorn says why on stderr).
    """
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, name="occubench-play-web", daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise UsageError(f"the play page could not listen on {host}:{port}")
        threading.Event().wait(0.02)
    bound = server.servers[0].sockets[0].getsockname()
    shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    try:
        yield f"http://{shown}:{bound[1]}"
    finally:
        server.should_exit = True
        thread.join()
