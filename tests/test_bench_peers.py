"""Peer benchmark loops: the module imports without any peer, skips cleanly, and plays whole games.

Figures are never asserted against a speed: CI machines vary.
"""

import json

import pytest

from cardenvs.benchmarks import peers


def test_peers_table_is_well_formed():
    names = [peer.name for peer in peers.PEERS]
    assert len(names) == len(set(names))
    for peer in peers.PEERS:
        assert "/" in peer.name and peer.interface and callable(peer.function)
    assert {"pyspiel/spades", "rlcard/uno", "pettingzoo/texas_holdem_v4", "shimmy/crazy_eights"} <= set(names)


def test_unknown_peer_is_an_error():
    with pytest.raises(ValueError, match="unknown peers"):
        peers.measure_peers(0.1, only=["nope/nothing"])


def test_every_row_has_a_figure_or_a_reason():
    # Cheap peers only: the AEC wrappers and pgx would make this slow, and pgx may compile for a minute.
    only = ["pyspiel/spades", "rlcard/uno", "pettingzoo/gin_rummy_v4", "pgx/bridge_bidding"]
    rows = peers.measure_peers(0.2, only=only)
    assert [row["peer"] for row in rows] == only
    for row in rows:
        if row["skipped"]:
            assert isinstance(row["skipped"], str)
        else:
            assert row["decisions_per_s"] > 0 and row["games"] >= 1
    json.dumps(rows)  # the CLI writes them as JSON


def test_pyspiel_spades_counts_decisions_not_deals():
    pytest.importorskip("pyspiel")
    result = peers.pyspiel_spades(0.2, seed=1)
    # 4 bids + 52 card plays per deal; the 52 dealing chance events are not decisions.
    assert result.games >= 1 and result.decisions == 56 * result.games
    assert result.decisions_per_s > 0


def test_shimmy_plays_whole_spades_games():
    pytest.importorskip("shimmy")
    pytest.importorskip("pyspiel")
    result = peers.shimmy_spades(0.2, seed=1)
    # shimmy alone would truncate after the 4 bids; the loop must see all 56 decisions.
    assert result.games >= 1 and result.decisions == 56 * result.games


def test_rlcard_uno():
    pytest.importorskip("rlcard")
    result = peers.rlcard_uno(0.2)
    assert result.games >= 1 and result.decisions >= result.games


def test_pettingzoo_texas_holdem():
    pytest.importorskip("rlcard")
    pytest.importorskip("pygame")
    result = peers.pettingzoo_texas_holdem(0.2)
    assert result.games >= 1 and result.decisions >= result.games


def test_cli_writes_json(tmp_path, capsys):
    out = tmp_path / "peers.json"
    assert peers.main(["--seconds", "0.1", "--only", "rlcard/uno", "--json", str(out)]) == 0
    assert "rlcard/uno" in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["peers"][0]["peer"] == "rlcard/uno"
