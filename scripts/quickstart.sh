#!/usr/bin/env bash
# The main job on a fresh machine: install, train a small self-play PPO agent for RING RANG
# on the quick config (about a minute), then evaluate it against the baselines and print the table.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q "torch==2.13.0"   # first, pinned: the CPU build where the index serves it (as on the
# reference machine); from stock PyPI add --index-url https://download.pytorch.org/whl/cpu (README, Install)
python -m pip install -q -e ".[train]"
run="runs/quickstart-$(date +%Y%m%d-%H%M%S)"
cardenvs train --config configs/quick_ring_rang.yaml --run-dir "$run"
cardenvs eval --game ring_rang --agents "policy:path=$run/policy.npz" trained rules_strong random \
  --deals 200 --workers 2 --out "$run/eval"
