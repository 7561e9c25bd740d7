"""Run the scripted OpenAI-compatible server: ``python -m occubench.reference.openai_server``."""

from __future__ import annotations

import argparse
import time

from occubench.reference._openai_server import ScriptedOpenAIServer


def main() -> None:
    """Serve until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    args = parser.parse_args()
    with ScriptedOpenAIServer(args.host, args.port, args.latency) as server:
        print(f"serving {server.base_url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
