"""Run the scripted OpenAI-compatible server: ``python -m occubench.testing.openai_server``.

``--flaky-rate 0.3`` makes it fail that share of the distinct completion requests on
their first attempt (429, 500, timeout, dropped connection, malformed body; seeded by
``--flaky-seed``), to try a client's retry settings offline; with ``--flaky-per-attempt``
every attempt fails with that probability (a retry can fail again). ``--rpm`` and
``--tpm`` limit requests and tokens per minute, answering 429 with a Retry-After.
"""

from __future__ import annotations

import argparse
import time

from occubench.testing._hooks import TRANSIENT_KINDS, FailureKind, Flakiness
from occubench.testing._openai_server import ScriptedOpenAIServer
from occubench.testing._rate_limits import RateLimits


def main() -> None:
    """Serve until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    parser.add_argument(
        "--flaky-rate",
        type=float,
        default=0.0,
        help="share of distinct requests that fail at first (0: never)",
    )
    parser.add_argument("--flaky-seed", type=int, default=0, help="seed of the failures")
    parser.add_argument(
        "--flaky-kinds",
        default=",".join(k.value for k in TRANSIENT_KINDS),
        help="comma-separated failure kinds",
    )
    parser.add_argument(
        "--flaky-hang",
        type=float,
        default=Flakiness().hang,
        help="most seconds a 'timeout' failure holds the request (less if the client gives up)",
    )
    parser.add_argument(
        "--flaky-per-attempt",
        action="store_true",
        help="fail every attempt with that probability, independently",
    )
    parser.add_argument("--rpm", type=float, help="requests per minute (429 beyond)")
    parser.add_argument("--tpm", type=float, help="tokens per minute (429 beyond)")
    args = parser.parse_args()
    flaky = (
        Flakiness(
            rate=args.flaky_rate,
            seed=args.flaky_seed,
            hang=args.flaky_hang,
            per_attempt=args.flaky_per_attempt,
            kinds=[FailureKind(k.strip()) for k in args.flaky_kinds.split(",")],
        )
        if args.flaky_rate > 0
        else None
    )
    limits = (
        RateLimits(requests_per_minute=args.rpm, tokens_per_minute=args.tpm)
        if args.rpm or args.tpm
        else None
    )
    with ScriptedOpenAIServer(
        args.host, args.port, args.latency, flaky=flaky, rate_limits=limits
    ) as server:
        print(f"serving {server.base_url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
