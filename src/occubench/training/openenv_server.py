"""Serve occubench's tasks over OpenEnv: ``python -m occubench.training.openenv_server``.

``--settings '{"env_mode": "E2", "task_ids": [1002]}'`` takes ``RunConfig`` fields as a
JSON object (as ``vf-eval -a`` does). It binds 127.0.0.1 only. The token is
``$OCCUBENCH_SERVE_TOKEN`` when set, else one drawn and printed once, inside the URL that
OpenEnv's client takes (``OccuBenchClient(base_url=URL)``). A bad setting is one line on
stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from pydantic import ValidationError

from occubench.defaults import DEFAULT_OPENENV_SESSIONS, DEFAULT_SERVE_TOKEN_ENV
from occubench.errors import ExitCode, UsageError
from occubench.text import validation_line


def main() -> None:
    """Serve until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default="reference", help="dataset folder, or reference")
    parser.add_argument("--simulator", required=True, help="the simulator model")
    parser.add_argument("--verifier", help="the judge model (default: the combination rule)")
    parser.add_argument("--settings", default="{}", help="RunConfig fields as a JSON object")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument(
        "--max-sessions", type=int, default=DEFAULT_OPENENV_SESSIONS, help="episodes at once"
    )
    args = parser.parse_args()
    from occubench.serving import serve_token
    from occubench.training._openenv_app import OpenEnvServer
    from occubench.training._source import EpisodeSource

    try:
        settings = json.loads(args.settings)
        if not isinstance(settings, dict):
            raise UsageError("--settings: a JSON object of RunConfig fields")
        source = EpisodeSource.of(args.dataset, args.simulator, args.verifier, **settings)
        server = OpenEnvServer(
            source, port=args.port, token=serve_token(), max_sessions=args.max_sessions
        )
    except json.JSONDecodeError as error:
        sys.exit(_usage(f"--settings is not JSON: {error}"))
    except ValidationError as error:
        sys.exit(_usage(f"--settings: {validation_line(error)}"))
    except UsageError as error:
        sys.exit(_usage(str(error)))
    with server:
        chosen = serve_token() is not None
        shown = f"{server.base_url} (token: ${DEFAULT_SERVE_TOKEN_ENV})" if chosen else server.url
        print(f"serving OpenEnv at {shown}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


def _usage(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return int(ExitCode.BAD_INPUT)


if __name__ == "__main__":
    main()
