"""The ``cardenvs`` command: ``cardenvs <command> [args]``; ``cardenvs <command> -h`` for help."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib import import_module

# command -> (module with main(argv), one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "eval": ("cardenvs.train.evaluate", "play line-ups of agents on fixed deals; win rates with 95% CIs"),
    "benchmark": ("cardenvs.train.benchmark", "place any agent on a fixed, versioned protocol: scorecard and rating"),
    "train": ("cardenvs.train.selfplay", "self-play MaskablePPO training from a YAML config (--resume continues)"),
    "train-vector": ("cardenvs.train.vector_ppo", "self-play PPO over the batched torch envs (--resume continues)"),
    "distill": ("cardenvs.train.distill", "fit a policy to a search agent's choices on its own positions"),
    "exploit": ("cardenvs.train.exploit", "exploitability: how often a best response beats one agent"),
    "bench": ("cardenvs.bench", "decisions per second of the envs (and of peer envs when installed)"),
    "play": ("cardenvs.play", "play a game (RING RANG, Rang or a plugin) in the terminal against agents"),
    "replay": ("cardenvs.replay", "replay a recorded game: final table, HTML page (--html)"),
    "serve": ("cardenvs.serve", "play a game in the browser against agents (a local web page)"),
}


def version() -> str:
    """The installed distribution's version (the source tree's when run uninstalled)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("cardenvs")
    except PackageNotFoundError:
        return "unknown (not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-V", "--version"):
        print(f"cardenvs {version()}")
        return 0
    if not args or args[0] in ("-h", "--help"):
        width = max(len(name) for name in COMMANDS)
        print("usage: cardenvs [--version] <command> [args]\n\ncommands:")
        for name, (_, text) in COMMANDS.items():
            print(f"  {name:<{width}}  {text}")
        print("\n`cardenvs <command> -h` shows a command's options")
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        print(f"error: unknown command {command!r}; expected one of {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    try:
        return _run(command, rest)
    except KeyboardInterrupt:  # Ctrl-C: one line, not a traceback (play and serve stop on their own terms)
        print(f"\ncardenvs {command}: interrupted", file=sys.stderr)
        return 130


def _run(command: str, rest: list[str]) -> int:
    try:
        module = import_module(COMMANDS[command][0])
    except ModuleNotFoundError as error:
        if error.name is None or error.name.split(".")[0] == "cardenvs":
            raise
        # a core install (no extras): name what to install instead of a traceback
        print(f"error: cardenvs {command} needs {error.name}, which is not installed: "
              f"pip install 'cardenvs[train]'", file=sys.stderr)
        return 2
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
