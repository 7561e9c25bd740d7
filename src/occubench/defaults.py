"""Every default of occubench in one place (``DEFAULT_*``)."""

from pathlib import Path
from typing import Final

DEFAULT_DATASET_ENV = "OCCUBENCH_DATASET"
"""Environment variable naming the dataset folder used when none is given."""

DEFAULT_DATASET_DIR = Path("data")
"""Dataset folder used when neither an argument nor the environment variable names one."""

DEFAULT_ENV_MODE = "E0"
DEFAULT_FAULT_COUNT = 2
DEFAULT_FAULT_DURATION = 2
DEFAULT_SEED = 0

DEFAULT_PROTOCOL = "paper"
"""The protocol a run follows unless it says otherwise: the paper's measurement."""

DEFAULT_MAX_TOOL_CALLS = 200
"""Tool calls an agent may make in one task under the occubench protocol."""

DEFAULT_MESSAGE_LIMIT = 1000
"""Safety net on messages per sample, above what DEFAULT_MAX_TOOL_CALLS needs."""

DEFAULT_USER_TURNS = 8
"""The simulated user's turn budget (replies it gives at most) on a task with a ``user``
brief whose ``max_turns`` does not say."""

DEFAULT_SIMULATOR_RETRIES = 3
"""Re-asks of the simulator when its answer holds no JSON object (occubench protocol)."""

DEFAULT_MAX_STATE_SIZE = 1_000_000
"""Characters of JSON the explicit state may grow to (release states hold under 2,000): a
simulator patch that would grow it further is refused and re-asked."""

DEFAULT_VERIFIER_VOTES = 3
"""k: judge calls per sample; the majority decides, ties fail."""

DEFAULT_VERIFIER_RETRIES = 2
"""Re-asks of one judge vote whose output is not a verdict."""

DEFAULT_SAMPLE_RETRIES = 2
"""Inspect retries of a sample that errored (infrastructure), before it is recorded."""

DEFAULT_FAIL_ON_ERROR = 1.0
"""Share of errored samples that fails a run: 1.0 = never abort, record errors instead."""

DEFAULT_MAX_DATASET_FILE_BYTES = 256 * 2**20
"""Bytes a dataset file may hold (256 MiB; the release's tasks file is about 1 MB, a
config about 20 KB): a larger one is reported, not read."""

DEFAULT_MAX_TWIN_FIDELITY_BYTES = 256 * 2**20
"""Bytes a file of twin-fidelity records (``audit --twin --out``) may hold when read back
(256 MiB; a few hundred steps per simulator take well under 1 MB)."""

DEFAULT_MAX_REGRADE_LOG_BYTES = 2**30
"""Bytes a log may unpack to for ``occubench regrade``, which holds one log in memory at a
time (1 GiB): a larger one is refused before it is read (a run in shards has smaller logs)."""

DEFAULT_DATE = "2025-06-16"
"""Fixed date given to the agent and the simulator: no wall clock in prompts."""

DEFAULT_FAULT_LATENCY = 5.0
"""Seconds a ``latency`` family fault delays an answer."""

DEFAULT_EXPECTED_TOOL_CALLS = 16
"""Calls a task is assumed to take when its plan does not say (fault spacing)."""

DEFAULT_MAX_CONNECTIONS = 128
"""Concurrent requests per model for the agent and the simulator (``occubench run``).

A sample waits on one call at a time, so this many tasks run in lockstep at the
critical-path bound. The verifier gets this times k (votes): a judge round of that
many samples finishing together is then one round of latency.
"""

DEFAULT_SAMPLES_PER_CONNECTION = 2
"""max_samples = this x max_connections: a sample waits on the agent or the simulator
about half the time each, so twice as many samples as connections keep both pools full."""

DEFAULT_LOG_REALTIME = False
"""Inspect's realtime sample log (live view of running samples in ``inspect view``).
Off by default: it costs a sizeable share of the harness CPU per model call (see
README "Throughput and concurrency"); finished samples are logged either way."""

DEFAULT_LOG_MODEL_API = False
"""Keep each model call's raw request and response in the log (Inspect's
``log_model_api``). Off by default: the records of successful calls cost CPU to build
and space to write; failed calls keep theirs either way."""

DEFAULT_TRACE_LEVEL = "warning"
"""Level of Inspect's trace file while occubench runs an eval (``INSPECT_TRACE_LEVEL``,
unless set in the environment); Inspect's own default traces every model call."""

DEFAULT_MAX_RETRIES = 8
"""Inspect retries of one model call (429, 5xx, timeouts, dropped connections), after the
provider SDK's own; backoff starts at 3 s and doubles (about 13-25 min in all)."""

DEFAULT_TIMEOUT = 3600
"""Seconds one model call may take with its retries before Inspect gives up (then the
sample errors and is retried as a whole, see DEFAULT_SAMPLE_RETRIES)."""

DEFAULT_ATTEMPT_TIMEOUT = 600
"""Seconds one attempt of a model call may take: a hung request is abandoned and retried."""

DEFAULT_RATE_LIMIT_RETRIES = 10
"""Rate-limited (429) attempts of one call the lean path retries itself, each after the
answer's Retry-After (or the SDK's backoff) and under the model's adaptive limit, before
Inspect's retry takes over (``occubench.providers``)."""

DEFAULT_MAX_RETRY_AFTER = 120.0
"""The longest Retry-After (seconds) a model's attempts wait for on the lean path; a longer
one is cut to this (an endpoint's answer is input: it cannot stall a run for days)."""

DEFAULT_MAX_ANSWER_BYTES = 64 * 2**20
"""Bytes of one answer body the lean path reads (64 MiB, decoded; a completion is a few KB,
a long one with logprobs a few MB): a larger answer is refused as it arrives, as an
unreadable answer (retried like a 5xx), never held whole."""

DEFAULT_FAST_PATH = True
"""OpenAI-compatible models (``openai-api/...``, ``vllm/...``) post their chat requests
through occubench's lean path (``occubench.providers``: the same bytes as the OpenAI SDK,
about half the CPU, an adaptive limit of requests in flight); off: Inspect's own path."""

DEFAULT_BOOTSTRAP_RESAMPLES = 2000
"""Bootstrap resamples for the intervals of R and of rate differences in reports."""

DEFAULT_BOOTSTRAP_SEED = 0
"""Seed of the report's bootstrap: the same logs give the same intervals."""

DEFAULT_REFERENCE_SIMULATOR = "occubench/twin"
"""The simulator ``compare-simulators`` holds the others against when the logs hold runs
under it (the twin: the environment as code, the "real environment" run of a task)."""

DEFAULT_REPORT_DIR = Path("occubench-report")
"""Folder ``occubench report`` writes its files to when --out is not given."""

DEFAULT_REPORT_TEXT_LIMIT = 20_000
"""Characters of one message shown in the HTML trajectory view (the rest is cut, noted)."""

DEFAULT_REPORT_TRAJECTORIES = 1000
"""Samples whose trajectory the HTML report embeds for its drill-down (errored ones
first, then failed, then passed, each in report order): a paper-sized grid has tens of
thousands of samples, whose trajectories would make a page of hundreds of megabytes
and take a minute to read from the logs. Only those samples are read."""

DEFAULT_SYNTH_SUBTOPICS = 16
"""Sub-topics (one environment each) the synthesis pipeline derives from a scenario."""

DEFAULT_SYNTH_RUNS_WITH_PLAN = 3
"""Agent runs with the solution plan per synthesized task (solvability)."""

DEFAULT_SYNTH_RUNS_WITHOUT_PLAN = 5
"""Agent runs without the plan per synthesized task (autonomous success rate)."""

DEFAULT_SYNTH_MAX_REPAIRS = 2
"""Repair attempts of a task that no run with the plan solved, before it is dropped."""

DEFAULT_SYNTH_GENERATOR_RETRIES = 2
"""Re-asks of the generator when its output is not valid JSON or fails validation."""

DEFAULT_SYNTH_RUN_BATCH = 200
"""Tasks per Inspect eval in the synthesis runs: results are stored after each batch, so
an interrupted run loses at most one batch."""

DEFAULT_AUDIT_RULE_CHECKS = 20
"""Observations per simulator the verifier judges for rule invention in ``occubench audit``."""

DEFAULT_AUDIT_CONCURRENCY = 16
"""Probe trajectories (and judge calls) the fidelity audit runs at once."""

DEFAULT_AUDIT_PLANS_PER_ENV = 2
"""Task plans per environment the fidelity audit replays as probe trajectories."""

DEFAULT_AUDIT_PROBE_VALUES = 3
"""Entity values a generated probe tries per tool (one call each)."""

DEFAULT_AUDIT_MAX_PROBES = 15
"""First-pass calls of a generated probe trajectory (repeats and unknown ids come on top)."""

DEFAULT_AUDIT_FLAG_BELOW = 1.0
"""An environment is flagged on a fidelity metric scoring below this (1.0: any failure)."""

DEFAULT_TWIN_TOLERANCE = 0.01
"""Relative tolerance of numeric fields compared with a twin's (1%; ``audit --tolerance``)."""

DEFAULT_TWIN_CANDIDATES_PER_TOOL = 4
"""Calls per tool ``twins.candidate_calls`` builds from the argument pools (canned and
planned calls come on top)."""

DEFAULT_TWIN_PROBE_WRITES = 12
"""Writes the twin-driven write probe of ``audit --twin`` strings at most."""

DEFAULT_TWIN_PROBE_READS = 3
"""Reads after each write of the twin-driven write probe at most (those whose answer it
changed)."""

DEFAULT_MAX_TWIN_TRAJECTORIES_BYTES = 64 * 2**20
"""Largest trajectories file ``audit --twin --trajectories`` reads."""

DEFAULT_FIDELITY_WEIGHTS = {
    "fabrication": 1.0,
    "omission": 1.0,
    "determinism": 1.0,
    "schema": 1.0,
    "unknown_id": 1.0,
    "rule_invention": 1.0,
}
"""Weights of the fidelity score's parts (a part that was not measured is left out)."""

DEFAULT_CACHE_ENV = "OCCUBENCH_CACHE"
"""Environment variable naming occubench's cache folder (the fetched release)."""

DEFAULT_RELEASE_URL_ENV = "OCCUBENCH_RELEASE_URL"
"""Environment variable overriding the URL of the public release's archive."""

DEFAULT_RELEASE_SHA256_ENV = "OCCUBENCH_RELEASE_SHA256"
"""Environment variable giving the SHA-256 of the archive at $OCCUBENCH_RELEASE_URL."""

DEFAULT_FETCH_TIMEOUT = 60.0
"""Seconds without data before a download is abandoned."""

DEFAULT_FETCH_MAX_DOWNLOAD_BYTES = 64 * 2**20
"""Bytes the release's archive may have when downloaded (64 MiB; the pinned release's
archive is 1.2 MB): a larger Content-Length is refused before reading, a download that
goes past it is stopped."""

DEFAULT_FETCH_MAX_UNPACKED_BYTES = 256 * 2**20
"""Bytes the release archive's files may add up to (256 MiB; the pinned release unpacks
to 6.6 MB): checked from the member headers before anything is written."""

DEFAULT_FETCH_MAX_MEMBERS = 10_000
"""Files and folders the release archive may hold (the pinned release holds 399)."""

DEFAULT_DEMO_LOG_DIR = Path("logs") / "demo"
"""Folder of ``occubench demo``'s logs (kept, so that report and inspect view read them)."""

DEFAULT_LOG_ROOT = "logs"
"""Folder under which ``occubench run`` gives each run a log folder of its own."""

DEFAULT_SHARD_MIN_SAMPLES = 40
"""Samples from which ``occubench run`` splits a run into shards by default (one per
core); below it one process is faster (``benchmarks/shard_break_even.py``)."""

DEFAULT_SHARD_MIN_IN_FLIGHT = 25
"""Samples in flight each default shard has at least: a shard is a process (a start, a few
hundred MB), not worth it for fewer (100 samples in flight: at most 4 shards)."""

DEFAULT_SHARD_CALLS_PER_SECOND = 50
"""Model calls a second one shard is given by default (``occubench.scale.shards_for_latency``):
at about 5 ms of harness CPU per call on the fast path, a quarter of a core, so that answers
arriving together are not kept waiting. 100 samples in flight at 1 s per call: 2 shards; at
10 s per call: 1."""

PREFLIGHT_TOOL_NAME = "preflight_echo"
"""The one tool the preflight offers an agent model (a sample's tools never use the name:
the local test server's ``Hold`` tells the preflight's request from a sample's by it)."""

DEFAULT_PREFLIGHT_TIMEOUT = 60.0
"""Seconds each model of a run has to answer the preflight's tiny request."""

DEFAULT_PREFLIGHT_RETRIES = 1
"""Retries of the preflight's request after a transient failure (429, 5xx, an unreadable
answer, a dropped connection): one flaky answer does not refuse a run; a missing key or
an unknown model is never retried."""

DEFAULT_WORKER_STOP_SECONDS = 30.0
"""Seconds an interrupted shard worker has to write its log before it is killed."""

DEFAULT_PROGRESS_POLL_SECONDS = 2.0
"""How often the live view of a sharded run re-reads the running shards' logs."""

DEFAULT_RAY_NUM_CPUS = 1.0
"""Ray CPUs one shard asks for (a shard is one Inspect process: about one core busy)."""

DEFAULT_SWEEP_LOG_DIR = Path("logs") / "sweeps"
"""Folder ``occubench sweep`` logs to when the sweep file and --log-dir do not say."""

DEFAULT_COLLECT_EVERY = 32
"""Finished samples between two full collections while an eval runs
(``occubench.scale._interpreter.sample_finished``): each frees the reference cycles of the
samples finished since the last one, so a shard's memory does not grow with its tasks."""

DEFAULT_GC_THRESHOLDS = (10_000, 50, 100)
"""Collector thresholds while an eval runs (``occubench.scale._interpreter``; CPython's are
(700, 10, 10)): the young generation is collected every 10,000 net allocations and a
full collection waits for 100 middle-generation ones."""

DEFAULT_SUBMIT_TOOL = "submit_answer"
"""Name of the tool an MCP client (``occubench serve``, an agent program) submits with."""

DEFAULT_AGENT_TIME_LIMIT = 600.0
"""Seconds an agent program (``--agent-command``) may run on one sample before it is
stopped and the sample recorded as an error."""

DEFAULT_AGENT_EXIT_GRACE = 5.0
"""Seconds an agent program may keep running after it submitted before it is stopped."""

DEFAULT_SERVE_PORT = 8765
"""Port of ``occubench serve --transport http`` on 127.0.0.1 (0: any free port)."""

DEFAULT_SERVE_TOKEN_ENV = "OCCUBENCH_SERVE_TOKEN"
"""Environment variable holding the token ``occubench serve --transport http`` requires
(unset: a new one is made and printed at start)."""

DEFAULT_ALLOWED_HOSTS = ("127.0.0.1", "localhost", "::1")
"""Host names a local web server (``occubench serve`` over HTTP, ``occubench review``)
answers to: the loopback ones; one bound to another address adds that address."""

DEFAULT_MAX_JSON_DEPTH = 100
"""Deepest JSON nesting accepted in any input (a dataset file, a tool call's arguments):
real data nests a few levels; Python's and pydantic's parsers give up at a few hundred,
so deeper input is refused with its own message instead."""

DEFAULT_MAX_MESSAGE_BYTES = 4 * 2**20
"""Bytes of one MCP message a served environment reads (a line on stdio, a request body
over HTTP; 4 MiB, the MCP SDK's own HTTP bound): a real tool call is a few KB. A longer
one is answered with a JSON-RPC error and skipped, never held whole."""

DEFAULT_MAX_MESSAGE_DEPTH = DEFAULT_MAX_JSON_DEPTH + 2
"""Deepest nesting of one MCP message: a tool call's arguments as deep as
``DEFAULT_MAX_JSON_DEPTH`` inside the JSON-RPC envelope (the message, its params).
Deeper is answered with a JSON-RPC error before it is parsed."""

DEFAULT_MAX_BRIDGE_BYTES = 64 * 2**20
"""Bytes of one request to an agent program's OpenAI-compatible endpoint (64 MiB: a
whole conversation of a long-context model, several times over)."""

DEFAULT_BRIDGE_REASONING_ANSWERS = 1024
"""Answers whose reasoning the bridge keeps per sample, to restore it where a program
dropped it (``occubench.serving._reasoning``): a long Claude Code session makes a few
hundred; past this, the answer found or kept least recently is forgotten first."""

DEFAULT_MAX_WORLD_LINE_BYTES = 16 * 2**20
"""Bytes of one line of a world (an entry, a context; 16 MiB): an entry holds its path's
arguments, the observation and, in explicit state mode, the state (at most
``DEFAULT_MAX_STATE_SIZE`` characters) and its patch. A longer line is not read."""

DEFAULT_MAX_WORLD_LINE_DEPTH = DEFAULT_MAX_JSON_DEPTH + 3
"""Deepest nesting of one line of a world: a value as deep as ``DEFAULT_MAX_JSON_DEPTH``
(arguments, an observation, a state) inside the entry around it (the entry, its path,
a step). Deeper is refused before it is parsed."""

DEFAULT_MAX_WORLD_ENTRIES = 1_000_000
"""Entries (and, apart, contexts) read from one world: its index holds a location per
entry (a few hundred bytes each), never the entries themselves."""

DEFAULT_MAX_WORLD_UNREAD_LINES = 10_000
"""Lines of one world that cannot be read (junk, torn, forged) before the whole world is
refused as not a world: each is a problem record ``world verify`` lists, so their count
bounds the memory they take (an honest world has a few: a torn last line per killed
writer)."""

DEFAULT_MAX_WORLD_UNREAD_BYTES = 16 * 2**20
"""Bytes of a world's unreadable lines (16 MiB) before it is refused, the bound in bytes
beside the one in lines: the bytes of lines read and found unreadable. A line longer than
``DEFAULT_MAX_WORLD_LINE_BYTES`` is skipped unread, a chunk at a time, so it counts as one
line of the lines bound and no bytes: one long garbage line does not refuse a world."""

DEFAULT_MAX_WORLD_PACK_RATIO = 200
"""Most bytes a member of a packed world may declare per compressed byte, checked from
the archive's listing before anything is decompressed (members declaring more than
``DEFAULT_WORLD_PACK_RATIO_FROM`` bytes): a world's entries carry digests and keys and
compress some tens of times; a file of newlines or repeated junk, a thousand times."""

DEFAULT_WORLD_PACK_RATIO_FROM = 16 * 2**20
"""Declared bytes of a member from which its compression ratio is checked (16 MiB)."""

DEFAULT_MAX_WORLD_SEGMENTS = 10_000
"""Segment files of one world folder or packed world (one per writer process)."""

DEFAULT_MAX_WORLD_UNPACKED_BYTES = 8 * 2**30
"""Bytes the files of a packed world may add up to once decompressed (8 GiB): checked
from the archive's listing, then again while each member is decompressed."""
DEFAULT_SIM_CHECK_MIN_SCHEMA = 0.5
"""Online simulator checks: an observation sharing less than this share (Jaccard index) of
its key paths with the tool's ``example_output`` fails the schema check."""

DEFAULT_VARIANCE_RESAMPLES = 1000
"""Task bootstrap resamples behind the intervals of variance components and MDDs."""

DEFAULT_MDD_POWER = 0.8
"""Power at which the minimum detectable difference between two agents is computed."""

DEFAULT_MDD_ALPHA = 0.05
"""Two-sided level of the test behind the minimum detectable difference."""

DEFAULT_CHARS_PER_TOKEN = 4
"""Characters per token of the offline models' usage and of the cost estimate."""

DEFAULT_ESTIMATE_ANSWER_TOKENS = 150
"""Cost estimate: tokens of an agent's final answer when the task has no answer template."""

DEFAULT_ESTIMATE_VERDICT_TOKENS = 60
"""Cost estimate: tokens of one judge vote (the verdict object and its feedback)."""

DEFAULT_MIN_FREE_MB = 64
"""A run does not start when the disk of its log folder has less free space (MB)."""

DEFAULT_LOCK_FILE = ".occubench.lock"
"""The lock file of a log folder: one run at a time writes into it."""

DEFAULT_BUNDLE_MAX_BYTES = 4 * 2**30
"""Bytes a bundle file may have (4 GiB; a paper-sized grid of 15 agents x E0-E3 over 382
tasks is about 400 MB of logs): a larger one is refused before it is opened."""

DEFAULT_BUNDLE_MAX_UNPACKED_BYTES = 8 * 2**30
"""Bytes a bundle's files may add up to (checked from its member headers first)."""

DEFAULT_BUNDLE_MAX_MEMBERS = 10_000
"""Files and folders a bundle may hold (its logs, manifest, summary and prices)."""

DEFAULT_BUNDLE_MAX_LOG_MEMBERS = 200_000
"""Members one log in a bundle may hold (a sample per task and epoch, and a few more)."""

DEFAULT_BUNDLE_MAX_LOG_MEMBER_BYTES = 512 * 2**20
"""Bytes one member of a log in a bundle may decompress to (a sample of a long trajectory
is a few MB)."""

DEFAULT_BUNDLE_MAX_LOG_BYTES = 32 * 2**30
"""Bytes all the members of one log in a bundle may decompress to."""

DEFAULT_BUNDLE_MAX_JSON_BYTES = 256 * 2**20
"""Bytes the bundle's own JSON files (manifest, summary, prices) may have."""

DEFAULT_BUNDLE_MAX_JSON_DEPTH = 4 * DEFAULT_MAX_JSON_DEPTH
"""Deepest JSON nesting in a bundle, measured before parsing (logs nest about a dozen levels
around the data they quote, which is bounded where it enters at DEFAULT_MAX_JSON_DEPTH)."""

DEFAULT_PLAY_LOG_ROOT = "logs/play"
"""Where ``occubench play`` sessions log, each to a new folder under it."""

DEFAULT_REASONING_SUMMARY: Final = "none"
"""Every role's ``reasoning_summary`` (and the preflight's) unless a role sets one: with it
unset, Inspect's OpenAI provider sends a reasoning model on the Responses API a paid
request of its own ("Please say 'hello, world'") once per model per process, counted in no
sample; the release's wire asks for no summaries."""

DEFAULT_FLOOR_LOG_DIR = "floor-logs"
"""Where the null agents' runs log by default: apart from the runs a report ranks."""

DEFAULT_EXPLOIT_GUARD = "flag"
"""What the exploit guard does with a pass it suspects (``occubench.guard.ExploitGuard``):
report it and keep the verdict."""

DEFAULT_EXPLOIT_QUOTE_CHARS = 160
"""Characters of the agent's, the simulator's or the judge's text one piece of exploit
evidence quotes (longer quotes are cut, with an ellipsis)."""

DEFAULT_EXPLOIT_EVIDENCE_MAX = 16
"""Pieces of exploit evidence one episode keeps (the first found, in trajectory order)."""

DEFAULT_EXPLOIT_SCAN_CHARS = 20_000
"""Characters of one text (an argument, an observation, an answer, a vote) the exploit guard
reads; the rest is not scanned."""

DEFAULT_EXPLOIT_LIFT_WORDS = 5
"""Consecutive words of an agent's instruction that, found in an observation or a judge's
verdict, count as text lifted from the agent."""

DEFAULT_TRAINING_MAX_TURNS = DEFAULT_MAX_TOOL_CALLS + 1
"""Model turns of a trainer's rollout (``occubench.training``): every call the occubench
protocol allows, then the answer."""

DEFAULT_EVAL_FRACTION = 0.2
"""Share of the selected tasks a trainer's environment holds out for evaluation
(``occubench.training.split_tasks``): the nearest whole number of tasks, at least one."""

DEFAULT_SPLIT_SEED = 0
"""Seed of the shuffle that divides the tasks between training and evaluation."""

DEFAULT_OPENENV_SESSIONS = 64
"""Episodes an OpenEnv server of ``occubench.training`` runs at once (one per session)."""

DEFAULT_ROLLOUT_CONCURRENCY = 32
"""Episodes a rollout batch plays at once (``occubench.training.run_rollouts``)."""

DEFAULT_ROLLOUT_MAX_TURNS = 50
"""Agent model turns of one rollout when the protocol sets no cap (then it is graded as it
stands)."""

DEFAULT_MAX_JOURNAL_BYTES = 64 * 2**20
"""Bytes of one sample's call journal (``occubench.calls``; 64 MiB): the calls a sample
pays for past it are not journaled (a resume pays for them again). A journal larger than
this is not read."""
