#!/usr/bin/env bash
# Time to strength of the batched trainer from scratch: win rate against rules_strong (95% CI) at fixed marks
# of training time, two training seeds per game; the machine's load average is written next to each run.
# Outputs: runs/tts_<game>/time_to_strength.{csv,png}. A benchmark, not a test (results: docs/training.md).
#   bash scripts/time_to_strength.sh [SECONDS] [EVERY]     # defaults 600 and 120: 2 x 2 x 10 minutes + evaluations
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN="${1:-600}"
EVERY="${2:-120}"
uptime
for game in ring_rang rang; do
  python scripts/time_to_strength.py --config "configs/vector_tts_$game.yaml" --seeds 0 1 \
    --seconds "$SECONDS_PER_RUN" --every "$EVERY" --opponent rules_strong --deals 200 --workers 2 \
    --out "runs/tts_$game"
done
uptime
