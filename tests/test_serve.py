"""``cardenvs serve``: options, the JSON the page gets (only the own seat), whole games over HTTP and in a browser."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from cardenvs.cards import JOKER
from cardenvs.replay import replay, validate
from cardenvs.serve import App, MoveError, WebGame, main, make_server, seat_specs

REPO = Path(__file__).resolve().parents[1]
SEARCH = "pimc:iterations=6,worlds=2"  # a needs_env agent, cheap enough for tests


@contextmanager
def serving(game: str, env_kwargs: dict[str, Any], specs: list[str], seat: int = 0, seed: int = 3) -> Iterator[App]:
    """A server on a free 127.0.0.1 port in a thread; yields the app (``app.url`` is its address)."""
    app = App(lambda s: WebGame(game, env_kwargs, seat, specs, s), seed)
    server = make_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    app.url = f"http://127.0.0.1:{server.server_address[1]}"  # type: ignore[attr-defined]
    try:
        yield app
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def request(app: App, path: str, body: Any = None, token: str | None = None, headers: dict | None = None):
    """(status, parsed JSON or text) of a request to the app."""
    data = None if body is None else json.dumps(body).encode()
    sent = {"X-Cardenvs-Token": app.token if token is None else token, "Content-Type": "application/json"}
    sent.update(headers or {})
    req = urllib.request.Request(app.url + path, data=data, headers=sent)  # type: ignore[attr-defined]
    try:
        with urllib.request.urlopen(req, timeout=60) as reply:
            status, text = reply.status, reply.read().decode()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read().decode()
    try:
        return status, json.loads(text)
    except json.JSONDecodeError:
        return status, text


# ------------------------------------------------------------------ options
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--game", "poker"], "unknown game 'poker'"),
        (["poker"], "unknown game 'poker'"),
        (["rang", "--game", "ring-rang"], "two games given"),
        (["rang", "--players", "11"], "--players: Rang takes 2..10 players"),  # the game as `play` takes it
        (["--game", "rang", "--partner", "random"], "Rang has no partners"),
        (["--game", "ring-rang", "--players", "3"], "RING RANG is always 4 players"),
        (["--game", "rang", "--players", "11"], "--players: Rang takes 2..10 players"),
        (["--game", "rang", "--players", "3", "--seat", "3"], "--seat must be 0..2"),
        (["--game", "ring_rang", "--opponents", "nope"], "unknown agent 'nope'"),
        (["--game", "ring-rang", "--opponents", "random", "random", "random"], "give 1 spec or 2"),
        (["--game", "rang", "--opponents", "random:x=1"], "unknown parameter(s) x"),
        (["--game", "rang", "--episode", "forever"], "episode must be"),
        (["--port", "70000"], "--port must be 0..65535"),
        (["--seed", "-1"], "--seed must be >= 0"),
    ],
)
def test_bad_options_fail_in_one_line_before_serving(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_seat_specs_put_partner_and_opponents_in_their_seats():
    assert seat_specs("ring_rang", 4, 1, ["random"], "rules_basic") == ["random", "random", "rules_basic"]
    assert seat_specs("ring_rang", 4, 0, ["a", "b"], None) == ["a", "a", "b"]  # partner = first opponent spec
    assert seat_specs("rang", 3, 2, ["a", "b"], None) == ["a", "b"]


def test_command_is_registered_and_prints_the_url():
    """``cardenvs serve --port 0`` in a subprocess: it prints the URL and serves the page there."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "cardenvs.cli", "serve", "--game", "rang", "--players", "2", "--opponents", "random",
         "--port", "0", "--seed", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert "http://127.0.0.1:" in line, line + proc.stderr.read()  # type: ignore[union-attr]
        url = line.split(" at ", 1)[1].split()[0]
        with urllib.request.urlopen(url, timeout=30) as reply:
            page = reply.read().decode()
        assert "cardenvs serve: Rang, 2 players" in page
        assert "http://" not in page and "https://" not in page and "src=" not in page  # nothing fetched elsewhere
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# ------------------------------------------------------------------ what the page gets
def _hide_swap(game: WebGame) -> None:
    """Change only cards the person cannot see: swap a card between two other hands, or with the stock or deck."""
    raw = game.raw.game
    others = [s for s in range(game.num_players) if s != game.seat]
    if game.game_name == "ring_rang":
        if raw.phase == 0:  # trump phase: only the chooser holds cards; swap two cards still to be dealt
            raw.deck[10], raw.deck[40] = raw.deck[40], raw.deck[10]
            return
        a, b = [s for s in others if raw.hands[s]][:2]
        card_a = (raw.hands[a] & -raw.hands[a]).bit_length() - 1
        card_b = raw.hands[b].bit_length() - 1
        raw.hands[a] ^= (1 << card_a) | (1 << card_b)
        raw.hands[b] ^= (1 << card_a) | (1 << card_b)
        return
    from cardenvs.rang.engine import JOKER_KIND

    seat = next(s for s in others if raw.hand_size[s])
    kind = next(k for k in range(JOKER_KIND + 1) if raw.hands[seat][k])
    stock_card = next(c for c in raw.stock if (JOKER_KIND if c == JOKER else c % 13) != kind)
    taken = raw._take(seat, kind)
    raw.give(seat, stock_card)
    raw.stock[raw.stock.index(stock_card)] = taken


@pytest.mark.parametrize(
    ("game_name", "env_kwargs"), [("ring_rang", {"episode": "round"}), ("rang", {"num_players": 4, "episode": "deal"})]
)
def test_state_does_not_change_when_only_hidden_cards_change(game_name, env_kwargs):
    from cardenvs.render import env_view

    rng = random.Random(1)
    checked = 0
    for seed in range(3):
        game = WebGame(game_name, env_kwargs, 1, ["random"] * 3, seed)
        for _ in range(6):
            if not game.human_to_act():
                break
            before = json.dumps(game.state(), sort_keys=True)
            full = (env_view(game.env), list(getattr(game.raw.game, "deck", [])))
            _hide_swap(game)
            assert (env_view(game.env), list(getattr(game.raw.game, "deck", []))) != full  # hidden cards changed
            assert json.dumps(game.state(), sort_keys=True) == before
            assert json.loads(before)["seed"] is None  # the seed gives every hand away: not before the end
            checked += 1
            game.move(rng.choice(game.state()["moves"])["action"])
    assert checked >= 6


def test_state_holds_no_other_hand():
    game = WebGame("ring_rang", {"episode": "round"}, 2, ["random"] * 3, 5)
    while game.human_to_act() and game.raw.game.phase != 1:
        game.move(game.state()["moves"][0]["action"])
    state = game.state()
    seats = state["view"]["seats"]
    assert [s["cards"] is None for s in seats] == [True, True, False, True]
    assert all(s["count"] > 0 for s in seats)


# ------------------------------------------------------------------ whole games over HTTP
def _play_over_http(app: App, rng: random.Random, limit: int = 500) -> dict:
    status, state = request(app, "/api/state")
    assert status == 200
    for _ in range(limit):
        if state["finished"]:
            return state
        move = rng.choice(state["moves"])
        status, state = request(app, "/api/move", {"action": move["action"], "turn": state["turn"]})
        assert status == 200, state
    raise AssertionError(f"the game did not end within {limit} moves")


@pytest.mark.parametrize(
    ("game_name", "env_kwargs", "specs"),
    [
        ("ring_rang", {"episode": "round"}, [SEARCH, "rules_basic", "random"]),
        ("rang", {"num_players": 3, "episode": "deal"}, ["random", SEARCH]),
    ],
)
def test_whole_game_over_http_and_its_record_replays(game_name, env_kwargs, specs):
    with serving(game_name, env_kwargs, specs) as app:
        state = _play_over_http(app, random.Random(7))
        assert state["over"] and state["seed"] == 3 and not state["moves"]
        status, data = request(app, "/api/record")
        assert status == 200
        validate(data)
        assert data["env"] == game_name and data["env_kwargs"] == env_kwargs and data["seed"] == 3
        assert data["agents"] == app.game.specs and data["agents"][0] == "human"
        assert data["actions"] == app.game.actions and len(data["actions"]) == state["turn"]
        env = replay(data)
        assert not env.agents  # the record replays to the end of the same game
        status, state = request(app, "/api/new", {})
        assert status == 200 and state["turn"] >= 0 and not state["finished"] and state["seed"] is None


def test_api_refuses_bad_requests():
    with serving("rang", {"num_players": 2, "episode": "deal"}, ["random"]) as app:
        assert request(app, "/api/state", token="wrong")[0] == 403
        assert request(app, "/api/state", headers={"Host": "evil.example:80"})[0] == 403  # DNS rebinding
        assert request(app, "/api/record")[0] == 409  # not before the end: it holds the seed
        _, state = request(app, "/api/state")
        assert request(app, "/api/move", {"action": 999, "turn": state["turn"]})[0] == 409
        assert request(app, "/api/move", {"action": state["moves"][0]["action"], "turn": state["turn"] + 1})[0] == 409
        assert request(app, "/api/move", [1])[0] == 400
        assert request(app, "/api/move", {"action": 1}, headers={"Content-Type": "text/plain"})[0] == 400
        assert request(app, "/api/nothing")[0] == 404
        status, state = request(app, "/api/resign", {})
        assert status == 200 and state["finished"] and not state["over"] and state["seed"] == 3
        status, data = request(app, "/api/record")
        assert status == 200 and data["actions"] == app.game.actions
    with pytest.raises(MoveError, match="game is over"):
        app.game.move(0)


# ------------------------------------------------------------------ whole games in a browser
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHROMEDRIVER = shutil.which("chromedriver")


@contextmanager
def browser(width: int = 1280, height: int = 900) -> Iterator[Any]:
    pytest.importorskip("selenium")
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("no chromium/chromedriver on PATH: cannot drive a browser")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not download anything
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--no-first-run", f"--window-size={width},{height}"):  # fmt: skip
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _wait_idle(driver: Any, turn: int, timeout: float = 60) -> None:
    """Wait until the page has drawn a state after ``turn`` and is not waiting for the server."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:  # the document may still be loading (no body yet) or be replaced while we read it
            body = driver.find_element("tag name", "body")
            if body.get_attribute("data-busy") == "0" and int(body.get_attribute("data-turn") or -1) > turn:
                return
        except (NoSuchElementException, StaleElementReferenceException):
            pass
        time.sleep(0.05)
    error = driver.find_element("id", "error").text
    raise AssertionError(f"the page did not update after turn {turn} within {timeout}s (error: {error!r})")


def play_in_browser(driver: Any, app: App, rng: random.Random, limit: int = 500) -> tuple[int, int]:
    """Play the person's seat to the end by clicking legal moves (buttons, or marked cards in the hand).

    Returns (clicks, of which on cards in the hand)."""
    driver.get(app.url + "/")  # type: ignore[attr-defined]
    _wait_idle(driver, -1)
    clicks = card_clicks = 0
    for _ in range(limit):
        body = driver.find_element("tag name", "body")
        if body.get_attribute("data-over") == "1":
            return clicks, card_clicks
        turn = int(body.get_attribute("data-turn"))
        buttons = driver.find_elements("css selector", "#moves button.move")
        marked = driver.find_elements("css selector", "#table .card.legal")
        assert buttons, "no legal move to click while the game is on"
        legal = {int(b.get_attribute("data-action")) for b in buttons}
        assert legal == {int(a) for a in app.game.env.legal_actions()}  # the page offers exactly the legal moves
        assert {int(c.get_attribute("data-action")) for c in marked} <= legal
        on_card = bool(marked) and rng.random() < 0.5
        (rng.choice(marked) if on_card else rng.choice(buttons)).click()
        clicks += 1
        card_clicks += on_card
        _wait_idle(driver, turn)
    raise AssertionError(f"the game did not end within {limit} clicks")


def _download_record(driver: Any) -> dict:
    """The game log through the page's download link (its href, fetched by the page itself)."""
    link = driver.find_element("id", "download")
    assert "off" not in link.get_attribute("class") and link.get_attribute("download").endswith(".json")
    text = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(document.getElementById('download').href).then(r => r.text()).then(done);"
    )
    return json.loads(text)


@pytest.mark.parametrize(
    ("game_name", "env_kwargs", "specs"),
    [
        ("ring_rang", {"episode": "round"}, ["random", "rules_basic", SEARCH]),
        ("rang", {"num_players": 3, "episode": "deal"}, ["rules_basic", SEARCH]),
        # a plugin game, drawn by the generic table (no html part of its own): its cards are clickable too
        ("crazy_eights", {"num_players": 3}, ["random", "rules_basic"]),
    ],
)
def test_whole_game_in_a_headless_browser(game_name, env_kwargs, specs, tmp_path):
    with browser() as driver, serving(game_name, env_kwargs, specs, seed=11) as app:
        clicks, card_clicks = play_in_browser(driver, app, random.Random(3))
        assert clicks >= 5 and 1 <= card_clicks < clicks and app.game.over
        assert "game over" in driver.find_element("id", "status").text
        last_line = app.game.log[-1]
        assert last_line in driver.find_element("id", "log").text
        data = _download_record(driver)
        validate(data)
        assert data["actions"] == app.game.actions and data["seed"] == 11
        assert not replay(data).agents
        driver.save_screenshot(str(tmp_path / "end.png"))
        assert (tmp_path / "end.png").read_bytes()[:4] == b"\x89PNG"


# ------------------------------------------------------------------ the page as a card table (issue 35, item 10)
def test_a_card_no_move_selects_says_why_in_the_terminals_words():
    rng = random.Random(0)
    for seed in range(10):
        game = WebGame("ring_rang", {"episode": "round"}, 0, ["random"] * 3, seed)
        while game.human_to_act():
            state = game.state()
            hand = state["view"]["seats"][0]["cards"]
            selectable = {code for move in state["moves"] for code in move["codes"]}
            assert set(state["why_not"]) == set(hand) - selectable  # every other own card gets a reason
            if any("you must follow" in reason for reason in state["why_not"].values()):
                return
            game.move(rng.choice(state["moves"])["action"])
    pytest.fail("no position where the person had to follow suit")


def test_favicon_is_served_not_a_404():
    with serving("rang", {"num_players": 3, "episode": "deal"}, ["random"]) as app:
        status, text = request(app, "/favicon.ico")
        assert status == 200 and text.startswith("<svg")


@pytest.mark.parametrize(("game_name", "env_kwargs"), [("ring_rang", {"episode": "round"}),
                                                       ("rang", {"num_players": 6, "episode": "deal"})])
def test_the_table_fits_a_1024x768_window(game_name, env_kwargs):
    """Your hand and the move buttons above the fold, nothing wider than the window, trick cards in front of
    their players (RING RANG) and the players as rows of a table (Rang)."""
    with browser(1024, 768) as driver, serving(game_name, env_kwargs, ["rules_strong"], seed=5) as app:
        for _ in range(4):  # into the play, with cards on the table
            state = app.game.state()
            if state["to_act"]:
                app.game.move(state["moves"][0]["action"])
        driver.get(app.url + "/")  # type: ignore[attr-defined]
        _wait_idle(driver, -1)
        moves_end, inner, wide, width = driver.execute_script(
            "return [document.getElementById('moves').getBoundingClientRect().bottom, window.innerHeight,"
            " document.documentElement.scrollWidth, window.innerWidth];")
        assert moves_end <= inner and wide <= width
        if game_name == "ring_rang":
            placed = driver.find_elements("css selector", "#table .trick .t")
            assert placed and all(e.get_attribute("class").split()[-1] in {"t0", "t1", "t2", "t3"} for e in placed)
        else:
            assert len(driver.find_elements("css selector", "#table .rang tr.row")) == 6


# ------------------------------------------------------------------ stderr (issue 42 item 14)
def _serve_process(stderr: Any, *extra: str) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-m", "cardenvs.cli", "serve", "--game", "rang", "--players", "2",
                             "--opponents", "random", "--port", "0", *extra], stdout=subprocess.PIPE, stderr=stderr,
                            text=True, cwd=REPO)
    line = proc.stdout.readline()  # type: ignore[union-attr]
    assert "http://127.0.0.1:" in line, line
    return proc, int(line.split("http://127.0.0.1:", 1)[1].split("/", 1)[0])


def _reset_mid_request(port: int, count: int) -> None:
    """Clients that send a request and reset the connection before the reply: the server's write fails."""
    import socket
    import struct

    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()


def _get(port: int, path: str = "/favicon.svg") -> int:
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        connection.request("GET", path)
        return connection.getresponse().status
    finally:
        connection.close()


def test_clients_that_go_away_print_no_traceback(tmp_path):
    """Before: a traceback for every reset or evicted connection (1,048 for 1,100 connections)."""
    import socket

    from cardenvs.serve import MAX_CONNECTIONS

    log = tmp_path / "stderr.txt"
    with open(log, "w") as stderr:
        proc, port = _serve_process(stderr)
        try:
            _reset_mid_request(port, 100)
            idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(MAX_CONNECTIONS + 40)]  # evicted
            for sock in idle[:20]:
                sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # half a request, then gone
            for sock in idle:
                sock.close()
            assert _get(port) == 200
            time.sleep(0.5)
        finally:
            proc.kill()
            proc.wait(timeout=30)
    assert log.read_text() == ""


def test_a_full_stderr_nobody_reads_does_not_wedge_the_server():
    """stderr a pipe never read: before, once it was full every thread blocked writing to it (1,022 threads)
    and the server never answered again. --verbose writes a line a request, and each reset client wrote a
    traceback: far more than a pipe holds."""
    proc, port = _serve_process(subprocess.PIPE, "--verbose")
    try:
        for _ in range(10):
            _reset_mid_request(port, 30)
            for _ in range(150):  # about 70 bytes of log each: 10 rounds fill a 64 KiB pipe twice over
                assert _get(port) == 200
        assert _get(port, "/") == 200 and proc.poll() is None
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_the_header_before_a_trump_is_chosen_says_so():
    """The page's table header read "trump - · tricks 0/13" before the chooser named a trump (issue 44 item 7)."""
    from cardenvs.render import env_view, table_js

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the page's drawing is JavaScript)")
    game = WebGame("ring_rang", {}, 0, ["random"], 3)
    views = [env_view(game.env, observer=0)]
    game.move(game.state()["moves"][0]["action"], game.state()["turn"])  # player_0 chooses the trump
    views.append(env_view(game.env, observer=0))
    assert views[0]["trump"] is None and views[1]["trump"] is not None
    script = table_js(["ring_rang"]) + "\nfor (const v of JSON.parse(process.argv[1])) console.log(tableHtml(v));"
    run = subprocess.run([node, "-e", script, json.dumps(views)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    before, after = run.stdout.splitlines()[:2]
    assert "trump not chosen yet &middot; tricks 0/13" in before and "trump -" not in before
    assert 'trump <span class="sym' in after and "not chosen" not in after
