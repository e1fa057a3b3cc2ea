#!/usr/bin/env bash
# Time to strength from scratch: win rate against rules_strong (95% CI) at fixed marks of training, two
# training seeds per game; the machine's load average, the CPU's model and its decisions a second are written
# next to each run.
# Outputs: runs/tts_<game>/time_to_strength.{csv,png} (the batched trainer) and, with SB3_SECONDS > 0,
# runs/tts_sb3_<game>/ (the SB3 path, configs/full_<game>.yaml, one seed). A benchmark, not a test
# (results: docs/training.md, "Time to strength").
#   bash scripts/time_to_strength.sh [SECONDS] [EVERY] [SB3_SECONDS]
#   # defaults 0, 120 and 0: SECONDS 0 trains each config's total_steps learner decisions (a policy kept every
#   # fifth: the same policies on any machine; ~10 minutes each on the reference 2-core machine); SECONDS > 0
#   # trains on the clock instead, a policy kept every EVERY seconds (the result then moves with the speed)
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN="${1:-0}"
EVERY="${2:-120}"
SB3_SECONDS="${3:-0}"
uptime
budget=()
if [ "$SECONDS_PER_RUN" != 0 ]; then budget=(--seconds "$SECONDS_PER_RUN" --every "$EVERY"); fi
for game in ring_rang rang; do
  python scripts/time_to_strength.py --config "configs/vector_tts_$game.yaml" --seeds 0 1 \
    ${budget[@]+"${budget[@]}"} --opponent rules_strong --deals 200 --workers 2 --out "runs/tts_$game"
  uptime
done
if [ "$SB3_SECONDS" != 0 ]; then
  for game in ring_rang rang; do
    python scripts/time_to_strength.py --trainer sb3 --config "configs/full_$game.yaml" --seeds 0 \
      --seconds "$SB3_SECONDS" --every "$EVERY" --opponent rules_strong --deals 200 --workers 2 \
      --out "runs/tts_sb3_$game"
    uptime
  done
fi
