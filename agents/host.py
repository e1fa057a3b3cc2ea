"""Play an agent of Python code behind the bot protocol, in a process of its own: ``python -m cardenvs.agents.host``.

``cardenvs benchmark`` runs every outside candidate out of process: an import path (``mybots.greedy:make_bot``),
an entry point or an ONNX network is built and played here, in the sandbox that holds ``exec:`` bots
(:mod:`cardenvs.agents.bot_process`), and speaks the line protocol of docs/bot_protocol.md to the harness. So
nothing the candidate's code does when imported or when it plays (patching the harness, reading the env, looking
for the seed) reaches the process that deals, scores and writes the scorecard: a patcher patches only this
process.

    python -m cardenvs.agents.host --game ring_rang --num-players 4 mybots.greedy:make_bot
    python -m cardenvs.agents.host --game ring_rang --num-players 4 --check mybots.greedy:make_bot

``--check`` builds the agent once and prints one JSON line, ``{"ok": true, "needs_env": false}`` or
``{"ok": false, "error": "..."}``, so the harness checks a candidate before any deal without importing it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from cardenvs.games import game_spec

from .registry import make_agent


def _build(spec: str, game: str, num_players: int) -> Any:
    return make_agent(spec, game, seed=None, **game_spec(game).env_info(num_players))


def check(spec: str, game: str, num_players: int) -> dict[str, Any]:
    """What ``--check`` prints: whether the agent builds, and whether it asks to see the env."""
    try:
        agent = _build(spec, game, num_players)
    except Exception as error:  # noqa: BLE001 (the candidate's code may raise anything)
        text = str(error) or type(error).__name__
        return {"ok": False, "error": text.splitlines()[0][:300]}
    needs_env = bool(getattr(agent, "needs_env", False))
    agent.close()
    return {"ok": True, "needs_env": needs_env}


def serve(spec: str, game: str, num_players: int, stdin: Any = None, stdout: Any = None) -> int:
    """Answer the harness's ``act`` messages with the agent's moves until ``bye`` or the end of input."""
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    sys.stdout = sys.stderr  # the agent's own prints must not mix with its answers
    agent = _build(spec, game, num_players)
    if getattr(agent, "needs_env", False):
        print(f"{spec}: the agent asks to see the env (needs_env), which a benchmark does not hand out",
              file=sys.stderr)
        return 2
    try:
        for line in stdin:
            message = json.loads(line)
            kind = message.get("type")
            if kind == "start":
                agent.reset(seed=message.get("seed"))
            elif kind == "act":
                observation = {"observation": np.asarray(message["observation"], dtype=np.float32),
                               "action_mask": np.asarray(message["action_mask"], dtype=np.int8)}
                action = agent.act(observation)
                # the harness checks the answer; a non-integer is sent as it is, to be refused there
                answer = int(action) if isinstance(action, (int, np.integer)) and not isinstance(
                    action, (bool, np.bool_)) else json.dumps(repr(action)[:60])
                stdout.write(f"{answer}\n")
                stdout.flush()
            elif kind == "bye":
                break
    finally:
        agent.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cardenvs.agents.host", description=__doc__.splitlines()[0])
    parser.add_argument("--game", required=True)
    parser.add_argument("--num-players", type=int, required=True)
    parser.add_argument("--check", action="store_true", help="build the agent once and print one JSON line")
    parser.add_argument("spec", help="the agent spec: module.path:attr[:k=v,...], an entry point, onnx:path=FILE")
    args = parser.parse_args(argv)
    if args.check:
        print(json.dumps(check(args.spec, args.game, args.num_players)))
        return 0
    return serve(args.spec, args.game, args.num_players)


if __name__ == "__main__":
    raise SystemExit(main())
