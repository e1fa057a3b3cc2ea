"""rgb_array images, table views, recorded games (replay to the identical game) and the HTML replay page."""

from __future__ import annotations

import builtins
import json
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from cardenvs import rang_v0, ring_rang_v0
from cardenvs.cards import CODES
from cardenvs.render import RED, TABLE, draw_view, env_view, html_page
from cardenvs.replay import html_replay, load, record, replay, save, steps, validate
from cardenvs.replay import main as replay_main


def _play_random(env, seed: int, max_steps: int | None = None) -> list[int]:
    """Random legal moves (live agents only); the actions taken, as a record holds them."""
    rng = np.random.default_rng(seed)
    actions = []
    for _agent in env.agent_iter():
        _obs, _reward, termination, truncation, _info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        if max_steps is not None and len(actions) == max_steps:
            break
        action = int(rng.choice(env.unwrapped.legal_actions()))
        env.step(action)
        actions.append(action)
    return actions


# ------------------------------------------------------------------ rgb_array
@pytest.mark.parametrize("steps_taken", [0, 7, 30])
def test_ring_rang_rgb_array(steps_taken):
    env = ring_rang_v0.env(render_mode="rgb_array", episode="round")
    env.reset(seed=5)
    _play_random(env, 1, steps_taken)
    image = env.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert image.shape[:2] == (720, 960)
    colours = {tuple(c) for c in image.reshape(-1, 3)[::7].tolist()}
    assert TABLE in colours and len(colours) > 20  # a table with cards and text on it
    assert (np.abs(image.astype(int) - RED).sum(axis=2) < 30).any()  # 13 cards in 4 hands: some are red


def test_rang_rgb_array_grows_with_players():
    heights = []
    for n in (2, 6):
        env = rang_v0.env(num_players=n, render_mode="rgb_array")
        env.reset(seed=3)
        _play_random(env, 2, 12)
        image = env.render()
        assert image.dtype == np.uint8 and image.shape[1:] == (960, 3)
        heights.append(image.shape[0])
    assert heights[1] > heights[0]


def test_rendering_is_deterministic_and_follows_the_state():
    env = ring_rang_v0.env(render_mode="rgb_array", episode="round")
    env.reset(seed=9)
    first = env.render()
    assert np.array_equal(first, env.render())
    _play_random(env, 3, 3)
    assert not np.array_equal(first, env.render())


def test_ring_rang_view_matches_the_game():
    env = ring_rang_v0.env(episode="round")
    env.reset(seed=12)
    _play_random(env, 4, 23)  # trump + 5 tricks + 2 cards (+ perhaps knocks)
    game = env.unwrapped.game
    view = env_view(env)
    assert view["trump"] == "CDHS"[game.trump]
    assert [e["card"] for e in view["trick"]] == [CODES[c] for c in game.trick_cards]
    assert view["lifted"] == game.lifted and view["pile"] == game.pile and view["scores"] == game.scores
    for seat in range(4):
        assert sorted(view["seats"][seat]["cards"]) == sorted(CODES[c] for c in range(52) if game.hands[seat] >> c & 1)
    hidden = env_view(env, observer=2)
    assert hidden["seats"][2]["cards"] == view["seats"][2]["cards"]
    assert all(hidden["seats"][s]["cards"] is None for s in (0, 1, 3))
    assert [s["count"] for s in hidden["seats"]] == [bin(h).count("1") for h in game.hands]
    json.dumps(view)  # JSON-ready for the HTML page


def test_rang_view_matches_the_game():
    env = rang_v0.env(num_players=3)
    env.reset(seed=1)
    _play_random(env, 5, 9)
    game = env.unwrapped.game
    view = env_view(env, observer=1)
    assert view["top"] == CODES[game.pile[-1]]
    assert view["stock"] == len(game.stock) and view["discard"] == len(game.discard)
    assert view["seats"][1]["cards"] == [CODES[c] for c in game.hand_cards(1)]
    assert view["seats"][0]["cards"] is None and view["seats"][0]["count"] == game.hand_size[0]
    assert [s["total"] for s in view["seats"]] == game.totals


def test_draw_view_rejects_an_unknown_view():
    with pytest.raises(ValueError, match="view\\['game'\\]"):
        draw_view({"game": "poker"})


def test_without_pillow_the_error_names_the_extra(monkeypatch):
    real_import = builtins.__import__

    def no_pil(name, *args, **kwargs):
        if name == "PIL" or name.startswith("PIL."):
            raise ImportError("No module named 'PIL'")
        return real_import(name, *args, **kwargs)

    env = ring_rang_v0.env(render_mode="rgb_array")
    env.reset(seed=0)
    monkeypatch.setattr(builtins, "__import__", no_pil)
    with pytest.raises(ImportError, match=re.escape("cardenvs[render]")):
        env.render()


# ------------------------------------------------------------------ records
@pytest.mark.parametrize(
    ("name", "make", "kwargs", "options"),
    [
        ("ring_rang", ring_rang_v0.env, {}, {"chooser": 2}),
        ("rang", rang_v0.env, {"num_players": 4}, {"dealer": 1}),
        ("rang", rang_v0.env, {"num_players": 6, "episode": "deal"}, None),
    ],
)
def test_replay_reproduces_the_identical_game(name, make, kwargs, options, tmp_path):
    env = make(**kwargs)
    env.reset(seed=31, options=options)
    actions = _play_random(env, 6)
    data = record(name, kwargs, 31, options, actions, agents=["random"] * env.unwrapped.num_players)
    save(data, tmp_path / "game.json")
    loaded = load(tmp_path / "game.json")
    assert loaded == data
    again = replay(loaded)
    assert again.unwrapped.snapshot() == env.unwrapped.snapshot()
    assert again.agents == [] == env.agents


def test_replay_of_a_partial_game_stops_where_the_record_stops():
    env = ring_rang_v0.env(episode="round")
    env.reset(seed=2)
    actions = _play_random(env, 7, 20)
    again = replay(record("ring-rang", {"episode": "round"}, 2, None, actions))
    assert again.unwrapped.snapshot() == env.unwrapped.snapshot()
    assert len(list(steps(record("ring_rang", {"episode": "round"}, 2, None, actions)))) == 21


def _good_record() -> dict:
    return record("rang", {"num_players": 2}, 4, None, [])


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"format": "other"}, "'format'"),
        ({"version": 2}, "'version'"),
        ({"env": "poker"}, "'env'"),
        ({"env_kwargs": []}, "'env_kwargs'"),
        ({"env_kwargs": {"render_mode": "ansi"}}, "'env_kwargs'"),
        ({"seed": "x"}, "'seed'"),
        ({"seed": True}, "'seed'"),
        ({"options": 3}, "'options'"),
        ({"actions": "1 2"}, "'actions'"),
        ({"actions": [1, -2]}, "'actions': item 1"),
        ({"actions": [1.5]}, "'actions': item 0"),
        ({"agents": [1]}, "'agents'"),
        ({"extra": 1}, "unknown field"),
    ],
)
def test_malformed_records_name_the_field(change, field):
    data = dict(_good_record(), **change)
    with pytest.raises(ValueError, match=re.escape(field)):
        validate(data)


def test_missing_field_and_bad_settings_and_illegal_actions():
    data = _good_record()
    del data["actions"]
    with pytest.raises(ValueError, match="field 'actions' is missing"):
        validate(data)
    with pytest.raises(ValueError, match="field 'env_kwargs': num_players"):
        replay(dict(_good_record(), env_kwargs={"num_players": 11}))
    with pytest.raises(ValueError, match="field 'options'"):
        replay(dict(_good_record(), options={"colour": 1}))
    with pytest.raises(ValueError, match="field 'actions': item 0: illegal action 27"):
        replay(dict(_good_record(), actions=[27]))  # discarding a Joker is not a first move
    env = rang_v0.env(num_players=2, episode="deal")
    env.reset(seed=4)
    actions = _play_random(env, 1)
    with pytest.raises(ValueError, match=f"item {len(actions)} comes after the end of the game"):
        replay(record("rang", {"num_players": 2, "episode": "deal"}, 4, None, [*actions, 0]))


def test_load_names_the_file(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="broken.json: not JSON"):
        load(path)
    path.write_text(json.dumps({"format": "cardenvs-replay", "version": 1, "env": "rang"}))
    with pytest.raises(ValueError, match="broken.json: field 'env_kwargs' is missing"):
        load(path)


# ------------------------------------------------------------------ HTML
def _frames_of(page: str) -> list[dict]:
    match = re.search(r'<script id="frames" type="application/json">(.*?)</script>', page, re.S)
    assert match is not None
    return json.loads(match.group(1))


def test_html_replay_structure_and_step_count(tmp_path):
    env = ring_rang_v0.env(episode="round")
    env.reset(seed=8)
    actions = _play_random(env, 9)
    data = record("ring_rang", {"episode": "round"}, 8, None, actions)
    page = html_replay(data)
    frames = _frames_of(page)
    assert len(frames) == len(actions) + 1
    assert frames[0]["caption"].startswith("start")
    assert (
        frames[1]["caption"]
        == f"step 1: player_{env.unwrapped.game.rounds[0]['chooser']} " + (env.unwrapped.action_names[actions[0]])
    )
    assert frames[-1]["view"] == env_view(env)  # the last frame is the final table
    for needle in ('id="prev"', 'id="next"', 'type="range"', "ArrowLeft", "ArrowRight"):
        assert needle in page
    assert not re.search(r"(src|href)\s*=|https?://|@import|url\(", page)  # self-contained: nothing external
    path = tmp_path / "game.json"
    save(data, path)
    out = tmp_path / "game.html"
    assert replay_main([str(path), "--html", str(out)]) == 0
    assert _frames_of(out.read_text(encoding="utf-8")) == frames


def test_html_escapes_script_ends():
    page = html_page([{"caption": "</script><b>", "view": {"game": "rang"}}], title="<x>")
    assert "</script><b>" not in page and "&lt;x&gt;" in page
    assert _frames_of(page)[0]["caption"] == "</script><b>"


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.skipif(CHROMIUM is None, reason="no headless Chromium installed: cannot screenshot the HTML replay")
def test_html_replay_screenshot_in_headless_chromium(tmp_path):
    env = rang_v0.env(num_players=3, episode="deal")
    env.reset(seed=5)
    actions = _play_random(env, 2)
    page = tmp_path / "replay.html"
    page.write_text(html_replay(record("rang", {"num_players": 3, "episode": "deal"}, 5, None, actions)))
    shot = tmp_path / "shot.png"
    subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--screenshot={shot}",
         "--window-size=1000,600", f"file://{page}?step=3"],
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    from PIL import Image

    image = np.asarray(Image.open(shot).convert("RGB"))
    assert image.shape == (600, 1000, 3)
    # the page drew its green table with white card faces on it (JavaScript ran)
    green = (np.abs(image.astype(int) - (28, 96, 58)).sum(axis=2) < 12).mean()
    faces = (np.abs(image.astype(int) - (252, 252, 246)).sum(axis=2) < 6).mean()
    assert green > 0.3 and faces > 0.005


def test_replay_command_prints_the_final_table_and_a_png(tmp_path, capsys):
    env = rang_v0.env(num_players=2, episode="deal")
    env.reset(seed=6)
    path = tmp_path / "g.json"
    save(record("rang", {"num_players": 2, "episode": "deal"}, 6, None, _play_random(env, 3)), path)
    png = tmp_path / "final.png"
    assert replay_main([str(path), "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "Rang deal 1" in out and "game over" in out
    from PIL import Image

    assert Image.open(png).size == (960, 140 + 86 * 2)
    path.write_text("[]")
    assert replay_main([str(path)]) == 2
    assert "must be a JSON object" in capsys.readouterr().err


def test_replay_png_without_pillow_is_one_line_before_any_output(tmp_path, capsys, monkeypatch):
    env = rang_v0.env(num_players=2, episode="deal")
    env.reset(seed=6)
    path = tmp_path / "g.json"
    save(record("rang", {"num_players": 2, "episode": "deal"}, 6, None, _play_random(env, 3)), path)
    monkeypatch.setitem(sys.modules, "PIL", None)  # as if Pillow were not installed
    assert replay_main([str(path), "--png", str(tmp_path / "x.png"), "--html", str(tmp_path / "x.html")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ("error: --png needs Pillow: pip install 'cardenvs[render]' "
                                                   "(or pip install pillow)\n")
    assert not (tmp_path / "x.html").exists()


def test_views_name_the_players_in_a_result_and_say_the_game_is_over():
    env = rang_v0.env(num_players=3, episode="deal")
    env.reset(seed=2)
    _play_random(env, 2)
    view = env_view(env)
    assert view["phase"] == "over"
    assert re.fullmatch(r"player_\d went out; points: player_\d \d+, player_\d \d+", view["result"])
    assert sorted(s["points"] for s in view["seats"])[0] == 0
    env = ring_rang_v0.env(episode="round")
    env.reset(seed=2)
    _play_random(env, 2)
    assert env_view(env)["phase"] == "over" and env_view(env, observer=2)["bottom"] == 2
