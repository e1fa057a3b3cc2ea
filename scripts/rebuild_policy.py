"""Rebuild a shipped policy from its recipe in agents/policies/manifest.json (docs/policies.md).

    python scripts/rebuild_policy.py --game ring_rang                        # the chain: commands, inputs, core-hours
    python scripts/rebuild_policy.py --game ring_rang --from-stage 11        # the part from stage 11 on
    python scripts/rebuild_policy.py --game ring_rang --from-stage 11 --run  # restore its inputs from git, run it

``--run`` restores from git the inputs that stages before ``--from-stage`` made, runs the stages in order, stops at
the first that fails, and compares the rebuilt file's SHA-256 with the pinned one. PyTorch's fits are not
bit-identical from one machine to another (docs/strength.md), so the hashes are not expected to agree: the
evaluation commands printed at the end say whether the rebuild is as strong as the shipped policy.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "agents" / "policies" / "manifest.json"
OVERRIDDEN = Path("runs") / "rebuild_policy"  # where a stage's config with its overrides is written

Stage = dict[str, Any]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def earlier_inputs(stages: list[Stage], start: int) -> list[dict[str, Any]]:
    """The inputs of the stages from ``start`` on that a stage before ``start`` makes (each path once)."""
    found: dict[str, dict[str, Any]] = {}
    for stage in stages[start - 1:]:
        for item in stage["inputs"]:
            if item["made_by_stage"] < start:
                found.setdefault(item["path"], item)
    return list(found.values())


def git_starts(stages: list[Stage]) -> list[int]:
    """The stages a rebuild can start at with git's copies of the earlier outputs alone."""
    return [s for s in range(1, len(stages) + 1) if all(i["restore"] for i in earlier_inputs(stages, s))]


def command_of(stage: Stage) -> str:
    """The stage's command; with overrides, on the copy of its config that :func:`write_overrides` writes."""
    if not stage.get("overrides"):
        return stage["command"]
    return stage["command"].replace(stage["config"], (OVERRIDDEN / Path(stage["config"]).name).as_posix())


def write_overrides(stage: Stage) -> None:
    import yaml

    data = yaml.safe_load((ROOT / stage["config"]).read_text())
    data.update(stage["overrides"])
    path = ROOT / OVERRIDDEN / Path(stage["config"]).name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {stage['config']} with {stage['overrides']} (scripts/rebuild_policy.py)\n"
                    + yaml.safe_dump(data, sort_keys=False))


def print_chain(game: str, entry: dict[str, Any], start: int) -> None:
    stages = entry["stages"]
    shown = stages[start - 1:]
    print(f"{game}: agents/policies/{entry['file']}, {entry['size_bytes']:,} bytes, SHA-256 {entry['sha256']}")
    print(f"  the same file as {entry['same_as']}; {len(stages)} stages, {entry['core_hours_total']:.2f} core-hours "
          f"in all; from git alone a rebuild can start at stage {', '.join(map(str, git_starts(stages)))}")
    restores = [i["restore"] or f"(on disk; git does not keep it) {i['path']}"
                for i in earlier_inputs(stages, start)]
    if restores:
        print(f"\nfirst, the inputs that stages before {start} made:")
        print("".join(f"  {line}\n" for line in restores), end="")
    for stage in shown:
        mark = "~" if stage["estimate"] else ""
        print(f"\nstage {stage['stage']}: {stage['name']}")
        print(f"  {stage['command']}")
        if stage.get("overrides"):
            print(f"  with {stage['overrides']} (run as: {command_of(stage)})")
        inputs = ", ".join(f"{i['path']} (stage {i['made_by_stage']})" for i in stage["inputs"]) or "none"
        print(f"  inputs: {inputs}")
        print(f"  writes: {stage['output']}")
        print(f"  core-hours: {mark}{stage['core_hours']:.2f} ({stage['wall_minutes']:g} min x {stage['cores']} "
              f"core{'s' if stage['cores'] > 1 else ''}{', an estimate' if stage['estimate'] else ''}): "
              f"{stage['basis']}")
        if stage.get("notes"):
            print(f"  note: {stage['notes']}")
    total = sum(s["core_hours"] for s in shown)
    which = f"stage {start}" if start == len(stages) else f"stages {start}-{len(stages)}"
    print(f"\n{which}: {total:.2f} core-hours{' (~ marks an estimate)' if any(s['estimate'] for s in shown) else ''}")
    print(f"after a rebuild, these commands check the strength of {entry['rebuilt_file']}:")
    print_checks(entry)


def print_checks(entry: dict[str, Any]) -> None:
    for check in entry["checks"]:
        print(f"  {check['command']}\n    shipped: {check['shipped']}; rule: {check['rule']}")


def run_chain(entry: dict[str, Any], start: int) -> int:
    for item in earlier_inputs(entry["stages"], start):
        if item["restore"]:
            print(f"$ {item['restore']}", flush=True)
            done = subprocess.run(shlex.split(item["restore"]), cwd=ROOT, capture_output=True, text=True)
            if done.returncode:
                reason = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
                print(f"error: restoring {item['path']} failed: {reason}", file=sys.stderr)
                return 1
    for stage in entry["stages"][start - 1:]:
        if stage.get("overrides"):
            write_overrides(stage)
        command = command_of(stage)
        print(f"\n== stage {stage['stage']}: {command}", flush=True)
        words = shlex.split(command)
        argv = [sys.executable, "-m", "cardenvs.cli", *words[1:]] if words[0] == "cardenvs" else words
        code = subprocess.run(argv, cwd=ROOT).returncode
        if code:
            print(f"error: stage {stage['stage']} failed (exit status {code}): {command}; "
                  f"fix it, then go on with --from-stage {stage['stage']} --run", file=sys.stderr)
            return 1
    rebuilt = ROOT / entry["rebuilt_file"]
    print(f"\nrebuilt {entry['rebuilt_file']}\n  SHA-256 {sha256(rebuilt)}\n  pinned  {entry['sha256']} "
          f"(agents/policies/{entry['file']})")
    if sha256(rebuilt) == entry["sha256"]:
        print("the same bytes as the shipped policy")
    else:
        print("they differ, as expected: PyTorch's fits are not bit-identical across machines (CPU threads do not "
              "add in a fixed order; docs/strength.md), so the hash cannot vouch for a rebuild. Its strength can:")
    print_checks(entry)
    print("(git status lists the files the rebuild restored from git or rewrote)")
    return 0


def main(argv: list[str] | None = None) -> int:
    games = json.loads(MANIFEST.read_text())["games"]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", required=True, help=f"the shipped policy's game: {' or '.join(games)}")
    parser.add_argument("--run", action="store_true", help="restore the inputs from git and run the stages")
    parser.add_argument("--from-stage", type=int, default=1, metavar="N", help="start at stage N (default 1)")
    args = parser.parse_args(argv)
    if args.game not in games:
        print(f"error: unknown game {args.game!r}; expected one of: {', '.join(games)}", file=sys.stderr)
        return 2
    entry = games[args.game]
    stages = entry["stages"]
    if not 1 <= args.from_stage <= len(stages):
        print(f"error: --from-stage: expected 1-{len(stages)} for {args.game}, got {args.from_stage}",
              file=sys.stderr)
        return 2
    lost = [i for i in earlier_inputs(stages, args.from_stage) if not i["restore"] and not (ROOT / i["path"]).exists()]
    if lost:
        first = min(lost, key=lambda i: i["made_by_stage"])
        latest = max(s for s in git_starts(stages) if s <= first["made_by_stage"])
        print(f"error: --from-stage {args.from_stage} needs {first['path']}, which stage {first['made_by_stage']} "
              f"makes and git does not keep: start at stage {latest} (--from-stage {latest}) or earlier",
              file=sys.stderr)
        return 2
    if not args.run:
        print_chain(args.game, entry, args.from_stage)
        return 0
    return run_chain(entry, args.from_stage)


if __name__ == "__main__":
    raise SystemExit(main())
