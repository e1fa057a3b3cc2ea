#!/usr/bin/env python3
"""A complete cardenvs bot in Python: reads the harness's JSON lines, answers each "act" with an action.

Run it in the harness:  cardenvs eval --game ring_rang --agents exec:path=examples/bots/random_bot.py rules_strong
The protocol: docs/bot_protocol.md. This bot plays a legal action picked by a hash of what it was shown, so
it is random-looking yet reproducible (it needs no seed: start's seed is there for bots that want one).
Standard library only.
"""

import json
import sys
import zlib


def choose(message: dict) -> int:
    """The move: one of the legal actions, picked by a checksum of the observation."""
    legal = message["legal"]
    return legal[zlib.crc32(json.dumps(message["observation"]).encode()) % len(legal)]


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("type") == "act":  # every other type (hello, start, bye, ...) needs no answer
            print(choose(message), flush=True)  # one line: the action index; flush, or the harness waits


if __name__ == "__main__":
    main()
