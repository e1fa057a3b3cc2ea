"""A clone stays light (issue 44, item 8): no committed file over 1 MB but the shipped policies, and the
documentation's folder well under 10 MB.

Results that the docs cite live in ``docs/`` as small text and images; a superseded run, policy or data set
leaves the tree and the doc that cites it names the commit where it lived ("in git at 3ac45be"). The tests
read ``git ls-files``, so they judge what is committed (or staged), not what a run left in the working tree;
outside a git checkout (an unpacked sdist, the installed-wheel stage of CI without git) they skip.
"""

import fnmatch
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MB = 1_000_000
# The only files allowed over LARGE_FILE bytes: the trained policies the package ships (agents/policies/*.npz).
ALLOWED_LARGE = ["agents/policies/*.npz"]
LARGE_FILE = 1 * MB
DOCS_LIMIT = 10 * MB
TREE_LIMIT = 40 * MB


def _tracked_sizes() -> dict[str, int]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    result = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True)
    if result.returncode != 0:
        pytest.skip("not a git checkout")
    sizes = {}
    for name in result.stdout.decode("utf-8", "surrogateescape").split("\0"):
        path = ROOT / name
        if name and path.is_file() and not path.is_symlink():  # a file deleted but not yet staged is skipped
            sizes[name] = path.stat().st_size
    return sizes


def test_no_committed_file_over_1_mb_but_the_shipped_policies():
    large = {name: size for name, size in _tracked_sizes().items()
             if size > LARGE_FILE and not any(fnmatch.fnmatch(name, pattern) for pattern in ALLOWED_LARGE)}
    assert not large, (
        "files over 1 MB in git (keep results as small text and images: scripts/strip_records.py drops a "
        "results.json's per-episode records; name the commit where a large file lived; or add a shipped file "
        "to ALLOWED_LARGE in tests/test_repo_weight.py): "
        + ", ".join(f"{name} ({size / MB:.1f} MB)" for name, size in sorted(large.items())))


def test_the_allow_list_matches_the_shipped_policies():
    """The allow-list names real files: a pattern that matches nothing would let its name be reused."""
    sizes = _tracked_sizes()
    for pattern in ALLOWED_LARGE:
        assert any(fnmatch.fnmatch(name, pattern) for name in sizes), f"{pattern} matches no file in git"


def test_docs_and_the_whole_tree_stay_small():
    sizes = _tracked_sizes()
    docs = sum(size for name, size in sizes.items() if name.startswith("docs/"))
    assert docs < DOCS_LIMIT, f"docs/ holds {docs / MB:.1f} MB in git (limit {DOCS_LIMIT / MB:.0f} MB)"
    total = sum(sizes.values())
    assert total < TREE_LIMIT, f"the files in git weigh {total / MB:.1f} MB (limit {TREE_LIMIT / MB:.0f} MB)"


def test_strip_records_keeps_the_summary(tmp_path):
    """scripts/strip_records.py, which scripts/measure_strength.sh runs last: the records go, the rest stays."""
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("strip_records", ROOT / "scripts" / "strip_records.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    summary = {"config": {"deals": 2}, "table": [{"agent": "random", "win_rate": 0.5}]}
    path = tmp_path / "run" / "results.json"
    path.parent.mkdir()
    path.write_text(json.dumps({**summary, "records": [{"deal": 0}] * 1000}))
    assert module.strip(path) and json.loads(path.read_text()) == summary
    assert not module.strip(path)  # already stripped: left as it is
