"""One sample of one run as a tidy row: what every reading of the logs produces."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, Field, computed_field

from occubench.agent import StopReason
from occubench.errors import ErrorSource
from occubench.faults import EnvMode, FaultEngine, InjectedFault
from occubench.grading import combined_verdict
from occubench.guard import ExploitEvidence
from occubench.protocols import Protocol


class Harness(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """What ran a sample: occubench, or the public release's own harness."""

    OCCUBENCH = "occubench"
    """An occubench run (an Inspect log)."""
    RELEASE = "release"
    """A run of the release's harness (its ``results.jsonl``): never grouped with ours."""


class WireTokens(BaseModel):
    """An agent program's generations on one wire in one sample (the bridge's records)."""

    wire: str = Field(description="The API it spoke: openai_chat, openai_responses, anthropic.")
    calls: int = Field(description="Generations asked on this wire.")
    streamed: int = Field(description="Of them, answered as an event stream.")
    input_tokens: int = Field(description="Input tokens, as the wire's answers reported them.")
    output_tokens: int = Field(description="Output tokens, as the wire's answers reported them.")


class SampleRow(BaseModel):
    """One sample (task x epoch) of one run."""

    log: str = Field(description="Log file the sample comes from.")
    run_id: str = Field(description="Inspect eval id of the run.")
    harness: Harness = Field(
        default=Harness.OCCUBENCH,
        description="What ran it: occubench, or the release's harness (results.jsonl).",
    )
    agent_model: str
    agent_model_name: str | None = Field(
        default=None,
        description="The Inspect model of the agent role, priced by its name (agent_model "
        "names the agent system around it: an agent program, an Inspect agent); None: not "
        "recorded, agent_model is the model.",
    )
    reasoning_effort: str | None = Field(
        default=None, description="The agent's reasoning effort (Inspect GenerateConfig), if set."
    )
    reasoning_tokens: int | None = Field(
        default=None,
        description="The agent's thinking budget in tokens (Inspect GenerateConfig), if set.",
    )
    simulator_model: str | None
    verifier_model: str | None
    regraded_from: str | None = Field(
        default=None,
        description="The log this sample's grade was made again from (occubench regrade); "
        "None: graded when it ran.",
    )
    regraded_from_run: str | None = Field(
        default=None,
        description="The eval id of the run this sample's grade was made again from (occubench "
        "regrade; it survives the log's renaming in a bundle); None: graded when it ran.",
    )
    env_mode: EnvMode
    fault_count: int
    fault_duration: int
    fault_engine: FaultEngine
    seed: int | None = Field(description="The fault plan's seed (None: not recorded).")
    epoch: int
    task_id: int | str
    scenario: str
    industry: str
    domain: str
    difficulty: int
    passed: bool | None = Field(description="The verdict; None when the sample errored.")
    votes_yes: int | None = Field(
        default=None, description="Judge votes for 'correct'; None when no judge ran."
    )
    votes_total: int | None = Field(default=None, description="Judge votes cast (k).")
    checks_passed: int | None = Field(
        default=None, description="Deterministic checks passed; None when the task has none."
    )
    checks_total: int | None = Field(default=None, description="Deterministic checks run.")
    error: str | None = Field(description="Infrastructure error, counted apart from verdicts.")
    error_source: ErrorSource | None = Field(
        default=None, description="Which part failed, for an errored sample."
    )
    protocol: Protocol = Field(
        default=Protocol.OCCUBENCH, description="The protocol the run followed."
    )
    errors_count_as_failures: bool = Field(
        default=False,
        description="The run's protocol counts an errored sample as a failed task (paper).",
    )
    stop_reason: StopReason | None
    agent_error: str | None = Field(
        default=None,
        description="The agent API failure that ended its loop, graded as it stood (the "
        "paper protocol's counting; None: none).",
    )
    tool_calls: int
    faults: list[InjectedFault] = Field(default_factory=list, description="Injected faults.")
    agent_wires: list[WireTokens] = Field(
        default_factory=list,
        description="An agent program's generations through the bridge, by wire (empty: none, "
        "or no agent program); the same tokens are the agent role's in tokens.",
    )
    tokens: dict[str, int] = Field(default_factory=dict, description="Total tokens by role.")
    input_tokens: dict[str, int] = Field(default_factory=dict, description="Input tokens by role.")
    output_tokens: dict[str, int] = Field(default_factory=dict, description="Output by role.")
    input_tokens_cache_read: dict[str, int] = Field(
        default_factory=dict, description="Input tokens read from a prompt cache, by role."
    )
    input_tokens_cache_write: dict[str, int] = Field(
        default_factory=dict, description="Input tokens written to a prompt cache, by role."
    )
    wall_time: float | None = Field(description="Seconds the sample took.")
    cost: float | None = Field(
        default=None, description="Cost of all roles in USD, when prices are configured."
    )
    env_name: str = Field(default="", description="Environment the task ran in.")
    simulator_seed: int | None = Field(
        default=None, description="Seed the simulator generated with (None: unseeded)."
    )
    sim_fallback_model: str | None = Field(
        default=None, description="Simulator re-asked after a failed online check, if bound."
    )
    sim_checked: int | None = Field(
        default=None, description="Observations the online simulator checks looked at (None: off)."
    )
    simulator_suspect: bool | None = Field(
        default=None,
        description="The trajectory kept an observation that failed an online check (None: off).",
    )
    sim_check_failures: dict[str, int] = Field(
        default_factory=dict,
        description="Observations whose first answer failed each kind of online check.",
    )
    user_model: str | None = Field(
        default=None, description="The simulated user's model, if the run bound one."
    )
    user_turns: int | None = Field(
        default=None, description="Replies of the simulated user (None: the task has no user)."
    )
    user_errors: int | None = Field(
        default=None,
        description="User replies kept with a failed check after their re-ask: the user's "
        "errors, never the agent's (None: the task has no user).",
    )
    user_ended: bool | None = Field(
        default=None,
        description="The user ended the conversation (False: its turn budget was spent or "
        "the episode ended otherwise; None: the task has no user).",
    )
    exploit_suspected: bool | None = Field(
        default=None,
        description="The exploit guard found evidence against the agent on a pass (None: the "
        "guard was off, or no verdict).",
    )
    simulator_off_contract: bool | None = Field(
        default=None,
        description="The exploit guard found an observation reporting a success out of its "
        "tool's contract that the agent did not ask for: the environment's fault, not an "
        "exploit (None: the guard was off, no verdict, or a log graded before it was "
        "recorded).",
    )
    exploit_zeroed: bool = Field(
        default=False, description="The suspected pass was graded a failure (exploit_guard=zero)."
    )
    exploit_evidence: list[ExploitEvidence] = Field(
        default_factory=list,
        description="The exploit guard's evidence, against the agent and against the "
        "simulator (kind simulator_off_contract; empty: none, or off).",
    )
    world: str | None = Field(
        default=None, description="The world the run answered from (its path; None: none)."
    )
    world_hits: int = Field(default=0, description="Observations answered from the world.")
    simulator_calls: int = Field(
        default=0,
        description="Observations the simulator was asked for (recorded into the world, if "
        "the run used one in record mode).",
    )
    live_calls: int = Field(
        default=0, description="Observations answered live for paths a replayed world lacks."
    )
    world_keys: list[str] = Field(
        default_factory=list,
        description="The world keys of the sample's answered calls, in order (empty: no world).",
    )
    trajectory: list[str] = Field(
        default_factory=list,
        description="The sample's trajectory as short digests, in order: 'a:' an action of the "
        "agent (tool and arguments), 'o:' what the environment answered it (the clean "
        "observation, or the error of a failed call), 'f:' the final answer (empty: not "
        "recorded). Two samples' first difference says who made them differ.",
    )
    unread: list[str] = Field(
        default_factory=list,
        description="Records of the sample in its log that could not be read, each named "
        "with why, and left out of this row (empty: every record was read).",
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def sample_key(self) -> str:
        """Identify the sample across reports and reviews: run id, task id and epoch."""
        return f"{self.run_id}:{self.task_id}:{self.epoch}"

    @property
    def counted(self) -> bool:
        """Whether the row counts in completion rates.

        A row with a verdict counts; an errored row counts (as a failed task) only under
        a protocol that says so (the paper's CR is over all tasks), and never one the
        spending limit stopped (the run did not try it).
        """
        if self.passed is not None:
            return True
        budget = self.error_source is ErrorSource.BUDGET
        return self.error is not None and self.errors_count_as_failures and not budget

    @property
    def verdict_follows(self) -> bool:
        """Whether the verdict is what its own checks and votes give.

        The combination rule is ``grading.combined_verdict``; a sample without a verdict
        has nothing to follow.
        """
        if self.passed is None or self.harness is Harness.RELEASE:
            return True  # no verdict, or one whose checks and votes were not recorded
        rule = combined_verdict(
            self.checks_passed,
            self.checks_total,
            self.votes_yes,
            self.votes_total,
            exploit_zeroed=self.exploit_zeroed,
        )
        return self.passed is rule

    @computed_field  # type: ignore[prop-decorator]
    @property
    def faults_applied(self) -> int:
        """Injected faults that changed what the agent saw."""
        return sum(f.applied for f in self.faults)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def faults_retried(self) -> int:
        """Applied faults after which the agent called the same tool again."""
        return sum(f.applied and f.retried_later for f in self.faults)
