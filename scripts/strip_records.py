"""Drop the per-episode ``records`` from harness outputs kept in the repository (issue 44, item 8).

    python scripts/strip_records.py docs/strength          # every results.json under the folders given

``cardenvs eval --out`` writes ``results.json`` with every episode's record (1-4 MB for a few thousand deals);
the docs cite only the summary (config, table, ratings), which stays. tests/test_repo_weight.py refuses a
committed file over 1 MB. Files without records are left as they are.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def strip(path: Path) -> bool:
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or "records" not in data:
        return False
    del data["records"]
    path.write_text(json.dumps(data, indent=1) + "\n")
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args()
    changed = [p for folder in args.folders for p in sorted(folder.rglob("results.json")) if strip(p)]
    print(f"strip_records: {len(changed)} file(s) stripped of their per-episode records")


if __name__ == "__main__":
    main()
