#!/usr/bin/env bash
# The main job on a fresh machine: install, train a small self-play PPO agent for
# RING RANG on the quick config, then evaluate it against the baselines.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q "torch==2.13.0"   # CPU build first: an unpinned torch pulls a multi-GB CUDA build
python -m pip install -q -e ".[train]"
cardenvs train --config configs/quick_ring_rang.yaml
cardenvs eval --game ring_rang --agents policy:path=runs/quick_ring_rang/policy.npz rules_strong random \
  --deals 200 --workers 2 --out runs/quick_ring_rang/eval
