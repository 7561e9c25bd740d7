"""Cost before the run: tokens per role and dollars, predicted from the dataset and settings.

Model. Each selected task is played through on paper with the prompts the run would send
(the same rendering functions build them) and counted with ``occubench.calls._tokens``:

- Calls. The agent makes the task's planned calls in order: its ``reference_plan`` steps,
  else the env's tools in turn, called with arguments made from their schemas, as many
  times as the task's expected calls (``expected_tool_calls``, else
  ``DEFAULT_EXPECTED_TOOL_CALLS``), one call per turn, then answers. ``calls_per_step``
  makes each planned call that many times (an agent that re-reads to confirm).
- Faults. The run's code-engine fault plan of the task is applied call by call (the real
  ``FaultSession``): an explicit fault answers the call with its error and no simulator
  call. With ``agent_retries`` (the default) the agent makes a failed call again, up to
  ``MAX_RETRIES_PER_CALL`` times; without, the failed call counts as one of the planned
  calls. Implicit faults are counted as the clean observation (they change its size
  little). Faults the simulator is told to make (``fault_engine=prompt``), semantic
  rewrites, re-asks after unparsable replies or failed online checks are not predicted.
- Observations. An exact call with a ``canned_observations`` entry gets that observation,
  any other its tool's ``example_output`` (``{}`` without one).
- Agent. Every turn sends the system prompt, the instruction (and plan), the tool
  definitions and the whole history so far; each call's reply is the tool call, the last
  reply the answer (the plan's answer template, else ``answer_tokens``).
- Simulator. Every call that reaches it sends its system prompt and the growing history of
  (action, observation) pairs, failed calls included, and the current action; it replies
  with the observation in tags.
- User. On a task with a ``user`` brief the agent first asks the user for each fact the
  brief holds back, one question a turn ("What is your <name>?"), and the user answers
  each ("My <name> is <value>."); after the agent's final answer the user closes the
  conversation with a line and the end marker. Each of the user's replies is one call of
  the user role: its system prompt (``users.user_system_prompt``), the opening request
  and the conversation so far. The user's turn budget (``agent.user_turns``: the brief's
  ``max_turns``, else the run's, else 8) caps its replies: with the budget spent before
  the end, the agent's last message is its answer and no closing reply is asked. The
  user's turns are in the agent's history and in the judge's trajectory. Re-asks after a
  failed check on the user's reply are not counted.
- Verifier. When a judge runs (a verifier role is bound, or a task without checks is judged
  by the simulator's model), each of the k votes sends
  the judge's system prompt and its request with the rendered trajectory, and replies with
  ``verdict_tokens``. The judge's tokens are the verifier's row whatever model plays it;
  when the simulator's model does, the run's logs count them under the simulator, and
  ``compare_estimate`` compares them there (``RoleCost.logged_as``).

Epochs multiply everything. Dollars come from a price table. Each role's prompts begin with
its previous one (the simulator's and the agent's are exact prefixes of the next, the k
votes share one prompt): the estimate counts the previous prompt, once it is at least
``ESTIMATE_CACHE_MIN_TOKENS`` long, as read from a provider's prompt cache
(``RoleTokens.cached_input_tokens``), priced at the table's ``cached_input_per_mtok``
(the full input price when it gives none). Caching changes the price, never the content.
``compare_estimate`` sets the estimate against the tokens
logs measured, per role.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
)
from inspect_ai.tool import ToolCall, ToolInfo
from pydantic import BaseModel, Field

from occubench.agent import (
    USER_TURN_METADATA,
    agent_input,
    critical_calls,
    expected_calls,
    run_system_prompt,
    simulator_layout,
    user_turns,
)
from occubench.calls import approx_tokens, message_tokens, prompt_tokens, reply_tokens
from occubench.config import NO_AGENT_MODEL, ResolvedRun
from occubench.costs._cost import PER_MTOK, PriceTable
from occubench.dataset import (
    EnvConfig,
    PlanStep,
    TaskRecord,
    UserBrief,
    example_arguments,
    tool_params,
)
from occubench.defaults import (
    DEFAULT_CHARS_PER_TOKEN,
    DEFAULT_ESTIMATE_ANSWER_TOKENS,
    DEFAULT_ESTIMATE_VERDICT_TOKENS,
    DEFAULT_EXPECTED_TOOL_CALLS,
)
from occubench.faults import FaultEngine, FaultSession
from occubench.grading import (
    VERIFIER_SYSTEM_PROMPT,
    render_trajectory,
    task_verifier_request,
    verifier_request,
)
from occubench.protocols import MessageStyle
from occubench.results import SampleRow
from occubench.roles import Role
from occubench.simulator import (
    SIM_CHECK_CONTRACT,
    STATE_CONTRACT,
    StateMode,
    failed_observation,
)
from occubench.users import END_MARKER, user_system_prompt

MAX_RETRIES_PER_CALL = 10
"""Times a retrying agent makes one failed call again (the reference agents' limit)."""


class Assumptions(BaseModel):
    """What the estimate assumes of the agent and the judge."""

    agent_retries: bool = Field(
        default=True, description="The agent makes a call that failed (explicit fault) again."
    )
    calls_per_step: int = Field(
        default=1,
        ge=1,
        description="Times the agent makes each planned call (an agent that re-reads to "
        "confirm what it saw makes each more than once).",
    )
    answer_tokens: int = Field(
        default=DEFAULT_ESTIMATE_ANSWER_TOKENS,
        ge=1,
        description="Tokens of a final answer when the task has no answer template.",
    )
    verdict_tokens: int = Field(
        default=DEFAULT_ESTIMATE_VERDICT_TOKENS, ge=1, description="Tokens of one judge vote."
    )


ESTIMATE_CACHE_MIN_TOKENS = 1024
"""The shortest prompt prefix the estimate counts as cached (OpenAI's and Anthropic's
documented minimum for most models; Gemini's implicit cache starts at 1,024 or 2,048)."""


class RoleTokens(BaseModel):
    """Tokens of one role."""

    input_tokens: int = Field(default=0, description="Prompt tokens.")
    output_tokens: int = Field(default=0, description="Completion tokens.")
    calls: int = Field(default=0, description="Model calls.")
    cached_input_tokens: int = Field(
        default=0,
        description="Of the prompt tokens, those a provider's prompt cache would read: each "
        "call's prompt begins with the role's previous one (of at least "
        "ESTIMATE_CACHE_MIN_TOKENS).",
    )

    @property
    def total(self) -> int:
        """Input and output tokens."""
        return self.input_tokens + self.output_tokens

    def add(self, input_tokens: int, output_tokens: int, previous_prompt: int = 0) -> None:
        """Count one call.

        Its prompt begins with the role's previous one, of ``previous_prompt`` tokens: read
        from cache once that is long enough.
        """
        if previous_prompt >= ESTIMATE_CACHE_MIN_TOKENS:
            self.cached_input_tokens += min(previous_prompt, input_tokens)
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.calls += 1

    def __add__(self, other: RoleTokens) -> RoleTokens:
        return RoleTokens(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            calls=self.calls + other.calls,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
        )

    def times(self, factor: int) -> RoleTokens:
        """These tokens ``factor`` times (epochs)."""
        return RoleTokens(
            input_tokens=self.input_tokens * factor,
            output_tokens=self.output_tokens * factor,
            calls=self.calls * factor,
            cached_input_tokens=self.cached_input_tokens * factor,
        )


class TaskEstimate(BaseModel):
    """The predicted interaction of one task (one epoch)."""

    task_id: int = Field(description="Task.")
    tool_calls: int = Field(description="Tool calls of the agent, failed ones included.")
    failed_calls: int = Field(description="Calls answered by an explicit fault.")
    judged: bool = Field(description="Whether a judge grades the task.")
    user_turns: int = Field(
        default=0, description="Replies of the simulated user (0: the task has no user)."
    )
    roles: dict[str, RoleTokens] = Field(description="Tokens by role.")


class RoleCost(BaseModel):
    """Tokens and dollars of one role over the whole run."""

    role: str = Field(description="agent, simulator, verifier, ...")
    model: str | None = Field(description="Model playing the role.")
    logged_as: str | None = Field(
        default=None,
        description="The role whose usage the run's logs count it under, when another "
        "role's model plays it (the simulator judges when no verifier is bound).",
    )
    tokens: RoleTokens = Field(description="Tokens over all samples.")
    cost: float | None = Field(description="Dollars (None: no price table, or no price).")


class RunEstimate(BaseModel):
    """The cost estimate of a run (``occubench estimate``)."""

    tasks: int = Field(description="Tasks selected.")
    epochs: int = Field(description="Runs of each task.")
    samples: int = Field(description="tasks x epochs.")
    assumptions: Assumptions
    roles: list[RoleCost] = Field(description="Tokens and cost by role.")
    preflight: list[RoleCost] = Field(
        default_factory=list,
        description="The preflight's requests per role and model (two turns each, made "
        "before the samples and logged in none), in the total.",
    )
    total_cost: float | None = Field(description="Dollars (None when a role has no price).")
    per_sample_cost: float | None = Field(description="total_cost / samples.")
    unpriced_models: list[str] = Field(description="Models without a price.")
    per_task: list[TaskEstimate] = Field(description="Each task's predicted interaction.")
    notes: list[str] = Field(description="What the estimate leaves out for this run.")

    def tokens(self) -> dict[str, RoleTokens]:
        """Tokens by role."""
        return {r.role: r.tokens for r in self.roles}


def _tools(env: EnvConfig) -> list[ToolInfo]:
    return [
        ToolInfo(name=t.name, description=t.description or t.name, parameters=tool_params(t))
        for t in env.action_set_definitions
    ]


def planned_calls(task: TaskRecord, env: EnvConfig) -> list[PlanStep]:
    """The calls the estimate's agent makes, in order (module doc)."""
    if task.reference_plan and task.reference_plan.steps:
        return [s.model_copy(deep=True) for s in task.reference_plan.steps]
    tools = env.action_set_definitions
    if not tools:
        return []
    count = expected_calls(task) or DEFAULT_EXPECTED_TOOL_CALLS
    return [
        PlanStep(tool=t.name, arguments=example_arguments(t.parameters))
        for t in (tools * count)[:count]
    ]


def _observation(env: EnvConfig, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    key = json.dumps(arguments, sort_keys=True)
    for canned in env.canned_observations or []:
        if canned.tool == tool and json.dumps(canned.arguments, sort_keys=True) == key:
            return canned.observation
    spec = next((t for t in env.action_set_definitions if t.name == tool), None)
    example = spec.example_output if spec is not None else None
    return example if isinstance(example, dict) else {}


def _answer(task: TaskRecord, assumptions: Assumptions) -> str:
    if task.reference_plan is not None:
        return task.reference_plan.answer
    return "x" * (assumptions.answer_tokens * DEFAULT_CHARS_PER_TOKEN)


class _Play:
    """One task played through on paper: the messages each role would be sent.

    The messages follow the run's protocol: the agent's prompt, the simulator's layout
    and the judge's request in the paper's style or occubench's.
    """

    def __init__(self, run: ResolvedRun, task: TaskRecord, env: EnvConfig) -> None:
        config, points, release = run.config, run.points, run.release
        explicit = config.state_mode is StateMode.EXPLICIT
        self.state = env.task_initial_state if explicit else None
        plan = task.solution_plan if config.with_plan else None
        self.agent: list[ChatMessage] = [
            ChatMessageSystem(content=run_system_prompt(run, task.task_scenario_name)),
            ChatMessageUser(
                content=agent_input(task.agent_instruction, plan, points.agent_messages)
            ),
        ]
        self.tools = _tools(env)
        self.layout = simulator_layout(run)
        rules = (
            (STATE_CONTRACT if explicit else "")
            + (SIM_CHECK_CONTRACT if points.sim_checks else "")
            + run.fault_settings.simulator_rules(
                points.simulator_messages, release.fault_rules if release else None
            )
        )
        system = self.layout.system_prompt(env, date=config.date, rules=rules)
        self.history_tokens = approx_tokens(system)
        self.agent_tokens = prompt_tokens(self.agent, self.tools)
        self.roles = {Role.AGENT.value: RoleTokens(), Role.SIMULATOR.value: RoleTokens()}
        self.prompts: dict[str, int] = {}
        """Each role's last prompt (tokens): the next one begins with it."""

    def count(self, role: str, input_tokens: int, output_tokens: int) -> None:
        """One call of ``role``, its prompt beginning with the role's previous one."""
        tokens = self.roles.setdefault(role, RoleTokens())  # the judge: whoever plays it
        tokens.add(input_tokens, output_tokens, self.prompts.get(role, 0))
        self.prompts[role] = input_tokens

    def call(
        self,
        index: int,
        tool: str,
        arguments: dict[str, Any],
        result: dict[str, Any],
        *,
        failed: bool,
    ) -> None:
        """One tool call: the agent's turn, the simulator's answer (unless it failed)."""
        self.count(Role.AGENT.value, self.agent_tokens, reply_tokens("", [(tool, arguments)]))
        action = self.layout.action_text(tool, arguments, None)
        text = json.dumps(failed_observation(result) if failed else result, ensure_ascii=False)
        if not failed:
            sent = self.layout.current(action, self.state)
            reply = self.layout.history(action, text)[-1].text
            if self.state is not None:
                reply += "<state_patch>[]</state_patch>"
            self.count(
                Role.SIMULATOR.value,
                self.history_tokens + message_tokens(sent),
                approx_tokens(reply),
            )
        self.history_tokens += sum(message_tokens(m) for m in self.layout.history(action, text))
        turn: list[ChatMessage] = [
            ChatMessageAssistant(
                content="",
                tool_calls=[ToolCall(id=f"call_{index}", function=tool, arguments=arguments)],
            ),
            ChatMessageTool(
                content=json.dumps(result, ensure_ascii=False),
                tool_call_id=f"call_{index}",
                function=tool,
            ),
        ]
        self.agent += turn
        self.agent_tokens += sum(message_tokens(m) for m in turn)

    def answer(self, text: str) -> None:
        """The agent's last turn: its final answer."""
        self.count(Role.AGENT.value, self.agent_tokens, reply_tokens(text))
        self.agent.append(ChatMessageAssistant(content=text))

    def ask(self, question: str) -> None:
        """The agent's turn that asks the user ``question`` (no tool call)."""
        self.count(Role.AGENT.value, self.agent_tokens, reply_tokens(question))
        self.agent.append(ChatMessageAssistant(content=question))
        self.agent_tokens += message_tokens(self.agent[-1])

    def reply(self, user: list[ChatMessage], said: str, number: int) -> None:
        """The user's reply ``said`` to the agent's last message: one user call.

        ``user`` is the user model's request so far (its prompt, the opening, the
        conversation), extended here with the agent's message and the reply.
        """
        user.append(ChatMessageUser(content=self.agent[-1].text))
        self.count(Role.USER.value, prompt_tokens(user), approx_tokens(said))
        user.append(ChatMessageAssistant(content=said))
        heard = ChatMessageUser(
            content=said.replace(END_MARKER, "").strip(), metadata={USER_TURN_METADATA: number}
        )
        self.agent.append(heard)
        self.agent_tokens += message_tokens(heard)


USER_CLOSING = f"Thank you, that is all I needed.\n{END_MARKER}"
"""The user's closing reply the estimate assumes (after the agent's final answer)."""


def _question(name: str) -> str:
    return f"What is your {name.replace('_', ' ')}?"


def _told(name: str, value: str) -> str:
    return f"My {name.replace('_', ' ')} is {value}."


def _user_request(brief: UserBrief, opening: str) -> list[ChatMessage]:
    """The user model's request before the conversation: its prompt and the opening."""
    return [
        ChatMessageSystem(content=user_system_prompt(brief, opening)),
        ChatMessageAssistant(content=opening),
    ]


def _judge_prompt(
    run: ResolvedRun, task: TaskRecord, env: EnvConfig, agent: list[ChatMessage], answer: str
) -> int:
    """Prompt tokens of one verifier vote, in the protocol's layout."""
    if run.points.verifier_messages is MessageStyle.PAPER:
        request = task_verifier_request(task, env, agent)
        return prompt_tokens([ChatMessageUser(content=request)])
    request = verifier_request(
        instruction=task.agent_instruction,
        initial_state=env.task_initial_state,
        state_description=env.state_description,
        verification_plan=task.verification_plan,
        trajectory=render_trajectory(agent),
        final_answer=answer,
    )
    return prompt_tokens(
        [ChatMessageSystem(content=VERIFIER_SYSTEM_PROMPT), ChatMessageUser(content=request)]
    )


def estimate_task(
    run: ResolvedRun,
    task: TaskRecord,
    env: EnvConfig,
    *,
    judge_role: str | None,
    assumptions: Assumptions,
) -> TaskEstimate:
    """The predicted tokens of one task in one epoch (module doc).

    Args:
        run: The resolved run.
        task: The task.
        env: Its environment.
        judge_role: The role whose model judges (None: the checks alone grade).
        assumptions: What the agent and the judge are assumed to do.
    """
    play = _Play(run, task, env)
    session: FaultSession | None = run.fault_settings.session(
        task.task_id,
        expected_calls(task),
        (env.fault_hints or {}).get("key_fields", []),
        tools=[t.name for t in env.action_set_definitions],
        critical_calls=critical_calls(task),
    )
    index = failed = heard = 0
    budget = user_turns(run, task) if task.user is not None else 0
    user = _user_request(task.user, task.agent_instruction) if task.user is not None else []
    for fact in task.user.facts[:budget] if task.user is not None else []:
        play.ask(_question(fact.name))
        heard += 1
        play.reply(user, _told(fact.name, fact.value), heard)
    calls = planned_calls(task, env)
    for call in [c for c in calls for _ in range(assumptions.calls_per_step)]:
        tool, arguments = call.tool, call.arguments
        for attempt in range(MAX_RETRIES_PER_CALL + 1):
            error = session.before_call(index, tool, arguments) if session else None
            play.call(
                index,
                tool,
                arguments,
                error or _observation(env, tool, arguments),
                failed=error is not None,
            )
            index += 1
            failed += int(error is not None)
            if error is None or not assumptions.agent_retries or attempt == MAX_RETRIES_PER_CALL:
                break
    answer = _answer(task, assumptions)
    play.answer(answer)
    if heard < budget:  # the answer goes to the user, who closes the conversation
        heard += 1
        play.reply(user, USER_CLOSING, heard)
    if judge_role is not None:
        prompt = _judge_prompt(run, task, env, play.agent, answer)
        for _ in range(run.config.votes):  # the k votes share one prompt
            play.count(Role.VERIFIER.value, prompt, assumptions.verdict_tokens)
    return TaskEstimate(
        task_id=task.task_id,
        tool_calls=index,
        failed_calls=failed,
        judged=judge_role is not None,
        user_turns=heard,
        roles=play.roles,
    )


def _outside_model(run: ResolvedRun, agent: str) -> bool:
    """Whether the agent is a program that brings its own model (no ``--agent-model``)."""
    return bool(run.config.agent_command) and agent == NO_AGENT_MODEL


def _notes(run: ResolvedRun, agent: str, talks: bool = False) -> list[str]:
    notes = []
    config, points = run.config, run.points
    if _outside_model(run, agent):
        notes.append(
            "the agent program's own model calls (no --agent-model: its model is outside "
            "the run, unlogged and unpriced)"
        )
    if points.fault_engine is FaultEngine.PROMPT and config.injects_faults():
        notes.append("faults the simulator is told to make are not predicted")
    if any(f.value == "semantic" for f in config.faults):
        notes.append("the simulator's semantic rewrites are not counted")
    if points.sim_checks:
        notes.append("re-asks after failed online simulator checks are not counted")
    if talks:
        notes.append("re-asks after failed checks on the simulated user's replies are not counted")
    return notes


PREFLIGHT_PROMPT_TOKENS = 60
"""Input tokens of the preflight's first turn (a one-line request, for the agent a tool);
its second turn holds the first, the answer and a one-word reply (about twice)."""


def _preflight_tokens(assumptions: Assumptions) -> RoleTokens:
    """One role's preflight: two turns, each answered at most like a final answer."""
    first = PREFLIGHT_PROMPT_TOKENS
    answer = assumptions.answer_tokens
    return RoleTokens(
        input_tokens=first + (first + answer + first), output_tokens=2 * answer, calls=2
    )


def _priced(
    role: str,
    model: str | None,
    tokens: RoleTokens,
    prices: PriceTable | None,
    logged_as: str | None = None,
) -> RoleCost:
    """A role's tokens with their dollars (None: no price for its model)."""
    price = prices.models.get(model) if prices is not None and model else None
    cost = None
    if price is not None:
        cached = tokens.cached_input_tokens
        cache_rate = (
            price.input_per_mtok
            if price.cached_input_per_mtok is None
            else (price.cached_input_per_mtok)
        )
        cost = (
            (tokens.input_tokens - cached) * price.input_per_mtok
            + cached * cache_rate
            + tokens.output_tokens * price.output_per_mtok
        ) / PER_MTOK
    return RoleCost(role=role, model=model, tokens=tokens, cost=cost, logged_as=logged_as)


def estimate_run(
    run: ResolvedRun,
    *,
    agent: str,
    roles: Mapping[Role, str],
    epochs: int = 1,
    prices: PriceTable | None = None,
    assumptions: Assumptions | None = None,
    preflight: bool = True,
) -> RunEstimate:
    """The cost estimate of a run (module doc), its preflight's requests too (``preflight``).

    Raises:
        DatasetError: the dataset is malformed or a filter names what it lacks.
        UsageError: no dataset is named.
    """
    chosen = assumptions or Assumptions()
    loaded = run.config.load_tasks()
    per_task = []
    for task in loaded.tasks:
        verifier = Role.VERIFIER if Role.VERIFIER in roles else None
        judge = verifier or (Role.SIMULATOR if not task.checks else None)
        per_task.append(
            estimate_task(
                run,
                task,
                loaded.env(task),
                judge_role=judge.value if judge else None,
                assumptions=chosen,
            )
        )
    models = {Role.AGENT.value: agent, **{r.value: m for r, m in roles.items()}}
    if _outside_model(run, agent):  # an agent program with a model of its own
        del models[Role.AGENT.value]
    totals: dict[str, RoleTokens] = {}
    for item in per_task:
        for role, tokens in item.roles.items():
            if role == Role.AGENT.value and role not in models:
                continue  # the program's calls: not the run's to count
            totals[role] = totals.get(role, RoleTokens()) + tokens.times(epochs)
    costs = []
    for role, tokens in totals.items():
        model = models.get(role)
        logged_as = None
        if role == Role.VERIFIER.value and Role.VERIFIER not in roles:
            model, logged_as = models.get(Role.SIMULATOR.value), Role.SIMULATOR.value
        costs.append(_priced(role, model, tokens, prices, logged_as))
    checks = [
        _priced(role, model, _preflight_tokens(chosen), prices)
        for role, model in models.items()
        if preflight
    ]
    every = [*costs, *checks]
    unpriced = sorted(
        {c.model or c.role for c in every if c.cost is None and c.tokens.total}
        if prices is not None
        else set()
    )
    total = None if prices is None or unpriced else sum(c.cost or 0.0 for c in every)
    samples = len(per_task) * epochs
    return RunEstimate(
        tasks=len(per_task),
        epochs=epochs,
        samples=samples,
        assumptions=chosen,
        roles=costs,
        preflight=checks,
        total_cost=total,
        per_sample_cost=total / samples if total is not None and samples else None,
        unpriced_models=unpriced,
        per_task=per_task,
        notes=_notes(run, agent, any(t.user_turns for t in per_task)),
    )


class TokenComparison(BaseModel):
    """Estimated against measured tokens of one role."""

    role: str
    estimated: int = Field(description="Estimated tokens (input and output).")
    measured: int = Field(description="Tokens the logs recorded.")
    ratio: float = Field(description="estimated / measured (nan when nothing was measured).")


def compare_estimate(estimate: RunEstimate, rows: Sequence[SampleRow]) -> list[TokenComparison]:
    """The estimate against the tokens the rows' logs measured, per role."""
    estimated: dict[str, int] = {}
    for r in estimate.roles:  # a role played by another's model is logged as that one
        as_logged = r.logged_as or r.role
        estimated[as_logged] = estimated.get(as_logged, 0) + r.tokens.total
    measured: dict[str, int] = {}
    for row in rows:
        for role, count in row.tokens.items():
            measured[role] = measured.get(role, 0) + count
    return [
        TokenComparison(
            role=role,
            estimated=estimated.get(role, 0),
            measured=measured.get(role, 0),
            ratio=estimated.get(role, 0) / measured[role] if measured.get(role) else float("nan"),
        )
        for role in sorted(estimated.keys() | {r for r, n in measured.items() if n})
    ]
