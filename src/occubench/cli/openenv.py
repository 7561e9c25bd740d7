"""``occubench openenv``: the selected tasks over OpenEnv's reset/step/state contract.

A trainer's OpenEnv client (``occubench.training.OccuBenchClient``) plays one task per
episode against the simulator and verifier given, with the run settings of
``occubench run`` (faults, protocol, votes, world, ...). The server binds 127.0.0.1 only;
every route needs the token: ``$OCCUBENCH_SERVE_TOKEN`` when set, else one drawn and
printed once, inside the URL OpenEnv's client takes. Needs the ``openenv`` extra.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

import typer

from occubench.cli._common import err_console, from_options, user_errors
from occubench.cli._options import Port, SimulatorModel, VerifierModel
from occubench.cli._settings import CLIENT_IS_AGENT, with_settings
from occubench.config import RunConfig
from occubench.defaults import DEFAULT_OPENENV_SESSIONS, DEFAULT_SERVE_TOKEN_ENV
from occubench.errors import UsageError


@with_settings(RunConfig, exclude=(*CLIENT_IS_AGENT, "twins"))
def openenv(
    simulator_model: SimulatorModel,
    verifier_model: VerifierModel = None,
    port: Port = 0,
    max_sessions: Annotated[
        int, typer.Option(min=1, help="Sessions (episodes) served at once.")
    ] = DEFAULT_OPENENV_SESSIONS,
    **settings: Any,
) -> None:
    """Serve the selected tasks over OpenEnv (reset/step/state), one task per episode.

    Each reset starts an episode of the task named (reset(task_id=...)) or the session's
    next one; an action is a tool call or the final answer, which is graded (the reward:
    1.0 for a pass). Binds 127.0.0.1 only; every request needs the token
    ($OCCUBENCH_SERVE_TOKEN, or the one printed at start inside the URL). Needs the
    openenv extra.
    """
    from occubench.serving import serve_token

    with user_errors():
        config = from_options(RunConfig, settings)
        config = config.model_copy(update={"dataset": str(config.dataset_dir().resolve())})
        try:
            from occubench.training import EpisodeSource, OpenEnvServer
        except ImportError as missing:
            raise UsageError(
                f"occubench openenv needs the openenv extra ({missing.name} is missing): "
                'pip install -e ".[openenv]"'
            ) from None
        source = EpisodeSource(config=config, simulator=simulator_model, verifier=verifier_model)
        if not source.task_ids():
            raise UsageError(f"no task in {config.dataset} matches the selection")
        token = serve_token()
        server = OpenEnvServer(source, port=port, token=token, max_sessions=max_sessions)
    with server:
        shown = f"{server.base_url} (token: ${DEFAULT_SERVE_TOKEN_ENV})" if token else server.url
        err_console.print(f"serving OpenEnv at {shown}", markup=False, highlight=False)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
