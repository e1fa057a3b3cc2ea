"""Robustness, third round (issue 34, items 4-15): run folders and files, the web server, inputs that passed
validation and failed later. (Items 1-3, hidden information: tests/test_hidden_information.py.)"""

from __future__ import annotations

import contextlib
import csv
import errno
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from cardenvs.train.config_files import config_from_dict
from cardenvs.train.runs import (
    CURVE_FIELDS,
    DiskFullError,
    load_checkpoint,
    lock_run_dir,
    plot_curve,
    truncate_curve,
    unlock_run_dir,
)

ROOT = Path(__file__).resolve().parents[1]


def tiny_vector(run_dir: Path, **overrides):
    from cardenvs.train.vector_ppo import VectorPPOConfig

    data = {"game": "rang", "run_dir": str(run_dir), "total_steps": 200, "num_envs": 8, "num_steps": 16,
            "minibatch_size": 64, "update_epochs": 1, "net_arch": [8], "league": {"self": 1.0},
            "snapshot_every": 10**6, "eval_every": 10**6, "eval_deals": 2, "eval_opponents": ["random"],
            "checkpoint_every": 100, "log_every": 10**6}
    data.update(overrides)
    return config_from_dict(data, "test", VectorPPOConfig)


def _write_config(path: Path, run_dir: Path, **overrides) -> Path:
    import yaml

    data = {"game": "rang", "run_dir": str(run_dir), "total_steps": 200, "num_envs": 8, "num_steps": 16,
            "minibatch_size": 64, "update_epochs": 1, "net_arch": [8], "league": {"self": 1.0},
            "eval_every": 10**6, "eval_deals": 2, "eval_opponents": ["random"], "checkpoint_every": 100}
    data.update(overrides)
    path.write_text(yaml.safe_dump(data))
    return path


# ----------------------------------------------------------------- item 4: one trainer per run folder
def test_a_second_trainer_on_a_locked_run_folder_is_refused_with_one_line(tmp_path, capsys):
    from cardenvs.train.vector_ppo import main

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; from cardenvs.train.runs import "
         "lock_run_dir; lock_run_dir(Path(sys.argv[1])); print('locked', flush=True); time.sleep(60)", str(run_dir)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert main(["--config", str(_write_config(tmp_path / "c.yaml", run_dir))]) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and f"is in use by process {holder.pid}" in error
        assert not (run_dir / "config.json").exists()  # nothing written by the refused run
    finally:
        holder.kill()
        holder.wait()


def test_the_stale_lock_of_a_dead_process_is_taken_over_and_a_finished_run_lets_go(tmp_path, capsys):
    from cardenvs.train.vector_ppo import train

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "run.lock").write_text(f"{dead.pid}\n")
    train(tiny_vector(run_dir))
    assert f"took over the lock of {run_dir} left by process {dead.pid}" in capsys.readouterr().err
    lock_run_dir(run_dir)  # let go when train() returned: this process (as another trainer would) takes it
    unlock_run_dir(run_dir)


# ----------------------------------------------------------------- item 6: a torn curve.csv row
def _curve(path: Path, rows: list[list], torn: str) -> None:
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(CURVE_FIELDS)
        writer.writerows(rows)
        f.write(torn)


@pytest.mark.parametrize("torn", ["200,1.5,rand", "200,1.5,random,2,2,0.5,0.1,", "200,,random,2,2,0.5,0.1,0.9,3",
                                  "2", "200,1.5,random,2,2,0.5,0.1,0.9,3,extra\n"])
def test_a_torn_curve_row_is_dropped_on_resume_so_the_plot_works(tmp_path, torn, capsys):
    curve = tmp_path / "curve.csv"
    _curve(curve, [[100, 1.0, "random", 2, 2, 0.5, 0.1, 0.9, 3.0]], torn)
    truncate_curve(curve, 10**6)
    rows = list(csv.DictReader(curve.open()))
    assert [r["steps"] for r in rows] == ["100"]
    assert "dropped 1 torn row" in capsys.readouterr().err
    plot_curve(curve, tmp_path / "curve.png", "t")  # the failure of the issue: float('') here


def test_a_resumed_run_with_a_torn_curve_row_finishes_and_publishes(tmp_path):
    from cardenvs.train.vector_ppo import train

    run_dir = tmp_path / "run"
    train(tiny_vector(run_dir, total_steps=100, eval_every=100))
    with (run_dir / "curve.csv").open("a") as f:
        f.write("200,3.1,random,2,")  # the crash mid-write
    export = tmp_path / "published.npz"
    train(tiny_vector(run_dir, total_steps=200, eval_every=100, export_to=str(export)), resume=True)
    assert export.exists() and (run_dir / "summary.json").exists()
    rows = list(csv.DictReader((run_dir / "curve.csv").open()))
    assert len(rows) == 2 and all(float(r["win_rate"]) >= 0 for r in rows) and int(rows[-1]["steps"]) >= 200


# ----------------------------------------------------------------- item 7: a full disk
@pytest.mark.parametrize("failure", ["torch", "enospc"])
def test_a_full_disk_during_a_save_says_so_and_keeps_the_last_checkpoint(tmp_path, monkeypatch, failure):
    import torch

    import cardenvs.train.runs as runs
    from cardenvs.train import vector_ppo

    run_dir = tmp_path / "run"
    real_save, folders = torch.save, []

    def save(obj, path, *args, **kwargs):
        if Path(path).parent not in folders:
            folders.append(Path(path).parent)
        if len(folders) > 1:  # the second checkpoint
            if failure == "torch":  # torch's words for it, with no space left
                monkeypatch.setattr(runs.shutil, "disk_usage", lambda p: SimpleNamespace(free=0))
                raise RuntimeError("[enforce fail at inline_container.cc:626] . basic_ios::clear: iostream error")
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real_save(obj, path, *args, **kwargs)

    monkeypatch.setattr(vector_ppo.torch, "save", save)
    with pytest.raises(DiskFullError) as raised:
        vector_ppo.train(tiny_vector(run_dir, total_steps=300))
    message = str(raised.value)
    folder, state = load_checkpoint(run_dir)  # the last whole checkpoint is intact
    assert message.startswith("the disk is full: writing the checkpoint of step") and str(run_dir) in message
    assert f"the checkpoint of step {state['steps']} is intact (--resume)" in message and "\n" not in message
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == ["latest.json", folder.name]
    monkeypatch.undo()
    vector_ppo.train(tiny_vector(run_dir, total_steps=300), resume=True)  # and it resumes
    assert json.loads((run_dir / "summary.json").read_text())["steps"] >= 300


# ----------------------------------------------------------------- item 5: exploit --out
def test_exploit_default_folders_never_collide_and_a_folder_of_another_target_is_refused(tmp_path):
    import numpy as np

    from cardenvs.agents.policy import load_policy, save_policy
    from cardenvs.train.exploit import best_response_config, default_out

    stem = tmp_path / ("p" * 60)  # two specs whose first 40 characters are the same
    weights = load_policy(ROOT / "agents" / "policies" / "rang.npz")
    save_policy(weights, f"{stem}_a.npz")
    save_policy({k: v + np.float32(0.5) if k.endswith("bias") else v for k, v in weights.items()}, f"{stem}_b.npz")
    spec_a, spec_b = f"policy:path={stem}_a.npz", f"policy:path={stem}_b.npz"
    assert default_out("rang", spec_a, 4) != default_out("rang", spec_b, 4)
    assert default_out("rang", spec_a, 4) == default_out("rang", spec_a, 4)  # the same target: resumed
    assert default_out("rang", spec_a, 4) != default_out("rang", spec_a, 5)

    out = tmp_path / "out"
    best_response_config("rang", spec_a, 200, 0, str(out / "run"))
    frozen = (out / "target_policy.npz").read_bytes()
    best_response_config("rang", spec_a, 400, 0, str(out / "run"))  # the same target again: fine (a resume)
    save_policy(load_policy(f"{stem}_b.npz"), f"{stem}_a.npz")  # the file behind the same spec changed
    for spec in (spec_b, spec_a, "random"):
        with pytest.raises(ValueError, match="holds the best response to another target"):
            best_response_config("rang", spec, 200, 0, str(out / "run"))
    assert (out / "target_policy.npz").read_bytes() == frozen  # nothing of the first run overwritten
    legacy = tmp_path / "legacy"
    (legacy / "run").mkdir(parents=True)
    with pytest.raises(ValueError, match="whose target is not recorded"):
        best_response_config("rang", "random", 200, 0, str(legacy / "run"))


# ----------------------------------------------------------------- items 8-10: the web server
@contextlib.contextmanager
def serving(host: str = "127.0.0.1"):
    from cardenvs.serve import App, WebGame, make_server

    app = App(lambda s: WebGame("rang", {"num_players": 2, "episode": "deal"}, 0, ["random"], s), 3)
    server = make_server(app, host, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield app, server, server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def request(host: str, port: int, path: str, token: str = "", headers: dict | None = None, body: bytes | None = None):
    """(status, headers, text) of one request (``headers`` may set ``Host``)."""
    connection = http.client.HTTPConnection(host, port, timeout=20)
    sent = {"X-Cardenvs-Token": token, "Content-Type": "application/json", **(headers or {})}
    connection.putrequest("POST" if body is not None else "GET", path, skip_host="Host" in sent)
    for key, value in sent.items():
        connection.putheader(key, value)
    if body is not None:
        connection.putheader("Content-Length", str(len(body)))
    connection.endheaders(body)
    reply = connection.getresponse()
    result = reply.status, dict(reply.getheaders()), reply.read().decode()
    connection.close()
    return result


def test_a_slow_body_does_not_block_the_game_and_times_out(monkeypatch):
    with serving() as (app, server, port):
        server.RequestHandlerClass.timeout = 1.0
        slow = socket.create_connection(("127.0.0.1", port))
        slow.sendall(b"POST /api/move HTTP/1.0\r\nHost: 127.0.0.1\r\nX-Cardenvs-Token: " + app.token.encode() +
                     b"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"act")
        time.sleep(0.2)  # the slow request is under way: before, it held the game's lock
        status, _, text = request("127.0.0.1", port, "/api/state", app.token)
        assert status == 200 and json.loads(text)["turn"] >= 0
        slow.settimeout(20)
        assert slow.recv(100) == b""  # closed after the read timeout, without a reply
        slow.close()


def test_idle_connections_cannot_exhaust_threads_or_descriptors(tmp_path):
    import resource

    from cardenvs.serve import MAX_CONNECTIONS

    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (160, 160))

    server = subprocess.Popen([sys.executable, "-m", "cardenvs.cli", "serve", "--game", "rang", "--players", "2",
                               "--opponents", "random"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              preexec_fn=low_limit)  # fmt: skip
    idle = []
    try:
        port = int(re.search(r"127\.0\.0\.1:(\d+)/", server.stdout.readline()).group(1))
        for _ in range(200):  # more than the server's descriptors: before, accept() failed and GET / hung
            idle.append(socket.create_connection(("127.0.0.1", port)))
        assert len(idle) > MAX_CONNECTIONS
        for _ in range(3):
            status, _, page = request("127.0.0.1", port, "/")
            assert status == 200 and "<script id=\"token\"" in page
        assert server.poll() is None
    finally:
        for sock in idle:
            sock.close()
        server.kill()
        server.wait()


def test_host_is_checked_on_every_bind_address_and_no_page_may_frame_this_one():
    with serving("127.0.0.1") as (app, _, port):
        for host, expected in (("evil.example", 403), (f"evil.example:{port}", 403), (f"localhost:{port}", 200),
                               (f"127.0.0.1:{port}", 200), (f"[::1]:{port}", 200), ("", 403)):
            assert request("127.0.0.1", port, "/api/state", app.token, {"Host": host})[0] == expected, host
        status, headers, _ = request("127.0.0.1", port, "/")
        assert headers["X-Frame-Options"] == "DENY" and "frame-ancestors 'none'" in headers["Content-Security-Policy"]
        assert request("127.0.0.1", port, "/api/state", app.token)[1]["X-Frame-Options"] == "DENY"
    with serving("0.0.0.0") as (app, _, port):  # before: the Host check was off on every other address
        assert request("127.0.0.1", port, "/api/state", app.token, {"Host": f"rebound.example:{port}"})[0] == 403
        assert request("127.0.0.1", port, "/api/state", app.token, {"Host": f"{socket.gethostname()}:{port}"})[0] == 200
        assert request("127.0.0.1", port, "/api/state", app.token)[0] == 200
    with serving("127.0.0.2") as (app, _, port):  # before: every request refused, the printed URL included
        assert request("127.0.0.2", port, "/api/state", app.token)[0] == 200
        assert request("127.0.0.2", port, "/api/state", app.token, {"Host": f"evil.example:{port}"})[0] == 403
    try:
        context = serving("::1")
        app, _, port = context.__enter__()
    except OSError:
        pytest.skip("no IPv6 loopback here")
    try:  # before: --host ::1 failed to start
        assert request("::1", port, "/api/state", app.token)[0] == 200
    finally:
        context.__exit__(None, None, None)


def test_a_deeply_nested_body_is_a_400_not_an_empty_reply():
    with serving() as (app, _, port):
        for body in (b"[" * 2000 + b"]" * 2000, b"[" * 4000):
            status, _, text = request("127.0.0.1", port, "/api/move", app.token, body=body)
            assert status == 400 and json.loads(text)["error"] == "the body is nested too deeply"
        assert request("127.0.0.1", port, "/api/move", app.token, body=b"\xff\xfe")[0] == 400
        assert request("127.0.0.1", port, "/api/state", app.token)[0] == 200


# ----------------------------------------------------------------- item 11: restore and load_state_dict values
def _ring_rang_after_a_round():
    import random

    from cardenvs import ring_rang_v0

    env = ring_rang_v0.env(episode="game")
    env.reset(seed=4)
    rng = random.Random(0)
    while not (env.unwrapped.game.rounds and len(env.unwrapped.game.history) >= 2):
        env.step(rng.choice(env.unwrapped.legal_actions()))
    return env


def _edits():
    def set_round(snap, value):
        snap["game"]["rounds"] = value

    def edit(path, value):
        def apply(snap):
            node = snap["game"]
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value(node[path[-1]]) if callable(value) else value
        return apply

    return {
        "a past round of nothing": lambda s: set_round(s, [{"history": []}]),
        "card 999 in a past trick": edit(["rounds", 0, "history", 0, "cards", 0], 999),
        "a past round's points": edit(["rounds", 0, "points"], lambda p: 3 if p != 3 else 2),
        "a past trick's winner": edit(["rounds", 0, "history", 0, "winner"], lambda w: (w + 1) & 3),
        "a float leader": edit(["history", 0, "leader"], lambda x: x + 0.9),
        "a string card": edit(["history", 1, "cards", 0], str),
        "a float in a past round": edit(["rounds", 0, "chooser"], float),
        "a string in a chooser draw": edit(["chooser_draws", 0, 0, 0], str),
        "a past trick of 3 cards": edit(["rounds", 0, "history", 0, "cards"], lambda c: c[:3]),
        "a past round's lifted": edit(["rounds", 0, "lifted", 0], lambda x: (x + 1) % 14),
        "an extra key in a round": edit(["rounds", 0], lambda r: dict(r, extra=1)),
    }


@pytest.mark.parametrize("name", list(_edits()))
def test_ring_rang_restore_checks_past_rounds_and_takes_no_converted_values(name):
    import copy

    env = _ring_rang_after_a_round()
    good = env.unwrapped.snapshot()
    bad = copy.deepcopy(good)
    _edits()[name](bad)
    assert json.dumps(bad) != json.dumps(good)
    with pytest.raises(ValueError, match="game field"):
        env.unwrapped.restore(bad)
    assert env.unwrapped.snapshot() == good  # nothing changed
    env.unwrapped.restore(json.loads(json.dumps(good)))  # the true state still restores


def _random_vector_state(env, steps: int):
    import torch

    out = env.reset(seed=1)
    generator = torch.Generator().manual_seed(0)
    mask = out[1]
    for _ in range(steps):
        mask = env.step(torch.multinomial(mask.float(), 1, generator=generator).squeeze(1))[1]
    return env.state_dict()


@pytest.mark.parametrize(("game", "field", "value"), [
    ("ring_rang", "to_act", 9), ("ring_rang", "owner", 5), ("ring_rang", "phase", 5), ("ring_rang", "trump", 7),
    ("ring_rang", "tricks_played", 3), ("ring_rang", "lifted", 4), ("ring_rang", "trick", 60),
    ("ring_rang", "deck", 0), ("ring_rang", "views", 0),
    ("rang", "current", 9), ("rang", "phase", 5), ("rang", "hand_size", 99), ("rang", "hands", 3),
    ("rang", "top", 20), ("rang", "stock_len", 500), ("rang", "pile_counts", 0), ("rang", "out_seat", -5),
])
def test_batched_load_state_dict_checks_values(game, field, value):
    from cardenvs.rang.vector import RangVectorEnv
    from cardenvs.ring_rang.vector import RingRangVectorEnv

    make = (lambda: RingRangVectorEnv(8, episode="game", seed=2)) if game == "ring_rang" else \
        (lambda: RangVectorEnv(8, num_players=3, episode="match", seed=2))  # fmt: skip
    state = _random_vector_state(make(), 40)
    env = make()
    before = _random_vector_state(env, 3)
    state[field] = state[field].clone()
    state[field][5] = value  # one game of eight
    with pytest.raises(ValueError, match="game 5 holds a value the rules cannot reach"):
        env.load_state_dict(state)
    after = env.state_dict()
    for name, tensor in before.items():  # nothing changed
        if hasattr(tensor, "shape"):
            assert bool((after[name] == tensor).all()), name


# ----------------------------------------------------------------- item 12: policy files checked whole at load
def _policy_edits():
    import numpy as np

    def rename(old, new):
        return lambda w: {k.replace(old + "/", new + "/"): v for k, v in w.items()}

    return {
        "a hidden layer of the wrong shape": (lambda w: dict(w, **{"hidden1/weight": w["hidden1/weight"][:, :100]}),
                                              "layer 'hidden1'"),
        "string weights": (lambda w: dict(w, **{"hidden0/bias": w["hidden0/bias"].astype(str)}), "not floats"),
        "a missing bias": (lambda w: {k: v for k, v in w.items() if k != "hidden2/bias"}, "missing array"),
        "a gap in the layers": (rename("hidden2", "hidden3"), "missing array"),
        "an unknown array": (lambda w: dict(w, extra=np.zeros(2, np.float32)), "unknown array"),
        "a bias of the wrong length": (lambda w: dict(w, **{"action/bias": w["action/bias"][:-1]}), "layer 'action'"),
        "integer weights": (lambda w: dict(w, **{"action/weight": w["action/weight"].astype(np.int32)}), "not floats"),
        "a 3-d weight": (lambda w: dict(w, **{"hidden0/weight": w["hidden0/weight"][None]}), "layer 'hidden0'"),
        "a numeric activation": (lambda w: dict(w, activation=np.float32(1)), "'activation' must be a string"),
    }


@pytest.mark.parametrize("name", list(_policy_edits()))
def test_a_policy_file_is_checked_whole_when_it_is_loaded(tmp_path, name):
    from cardenvs.agents.policy import load_policy, save_policy
    from cardenvs.agents.registry import check_agent

    edit, message = _policy_edits()[name]
    path = save_policy(edit(load_policy(ROOT / "agents" / "policies" / "rang.npz")), tmp_path / "bad.npz")
    with pytest.raises(ValueError, match=message):
        load_policy(path)
    with pytest.raises(ValueError, match=message):  # before: it passed, and failed at the first move
        check_agent(f"policy:path={path}", "rang", num_players=4)


def test_a_policy_for_other_sizes_is_refused_when_the_agent_is_made(tmp_path):
    from cardenvs.agents.policy import load_policy, save_policy
    from cardenvs.agents.registry import check_agent

    weights = load_policy(ROOT / "agents" / "policies" / "rang.npz")
    narrow = save_policy(dict(weights, **{"action/weight": weights["action/weight"][:27],
                                          "action/bias": weights["action/bias"][:27]}), tmp_path / "narrow.npz")
    with pytest.raises(ValueError, match="action layer has 27 outputs, the game 28 actions"):
        check_agent(f"policy:path={narrow}", "rang", num_players=4)  # before: it played the first legal action
    with pytest.raises(ValueError, match="takes observations of size 82, the game's have 87"):
        check_agent(f"policy:path={ROOT / 'agents' / 'policies' / 'rang.npz'}", "rang", num_players=5)
    check_agent(f"policy:path={ROOT / 'agents' / 'policies' / 'rang.npz'}", "rang", num_players=4)


def test_a_policy_file_that_unpacks_too_large_is_refused_before_it_is_unpacked(tmp_path):
    import zipfile

    from cardenvs.agents.policy import MAX_POLICY_BYTES, load_policy

    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive, \
            archive.open("hidden0/weight.npy", "w", force_zip64=True) as member:  # fmt: skip
        chunk = bytes(2**22)
        for _ in range(MAX_POLICY_BYTES // len(chunk) + 1):
            member.write(chunk)
    assert bomb.stat().st_size < 2**20
    with pytest.raises(ValueError, match="unpacks to 260 MiB, more than the 256 MiB"):
        load_policy(bomb)


# ----------------------------------------------------------------- item 13: configs checked before the run folder
BOMB = """game: rang
run_dir: RUN
env_kwargs:
  a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1]
  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
  f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
  g: [*f, *f, *f, *f, *f, *f, *f, *f, *f]
"""


@pytest.mark.parametrize(("trainer", "text", "message"), [
    ("train-vector", BOMB, "aliases (*name) are not allowed"),
    ("train", BOMB, "aliases (*name) are not allowed"),
    ("train-vector", "game: rang\nrun_dir: RUN\nenv_kwargs: " + "[" * 5000 + "]" * 5000, "nested too deeply"),
    ("train-vector", "game: rang\nrun_dir: RUN\nenv_kwargs: {a: " + "[" * 30 + "]" * 30 + "}", "nested more than 20"),
    ("train-vector", "game: rang\nrun_dir: RUN\nenv_kwargs: {colour: red}", "env_kwargs: the Rang env does not take"),
    ("train", "game: ring_rang\nrun_dir: RUN\nenv_kwargs: {colour: red}", "env_kwargs: the RING RANG env does not"),
    ("train-vector", "game: ring_rang\nrun_dir: RUN\nenv_kwargs: {signals: true}", "the batched RING RANG env does"),
    ("train-vector", "game: rang\nrun_dir: RUN\nenv_kwargs: {episode: match}", "fields of the config itself"),
    ("train", "game: rang\nrun_dir: RUN\ngamma: -5", "gamma: expected a number in (0, 1]"),
    ("train", "game: rang\nrun_dir: RUN\nclip_range: -1", "clip_range: expected a number > 0"),
    ("train-vector", "game: rang\nrun_dir: RUN\nclip_coef: -1", "clip_coef: expected a number > 0"),
    ("train-vector", "game: rang\nrun_dir: RUN\nlearning_rate: .nan", "holds NaN or an infinity"),
    ("train-vector", "game: rang\nrun_dir: RUN\nleague: {self: .inf}", "holds NaN or an infinity"),
    ("train-vector", "", "is empty"),
    ("train", "# nothing but a comment\n", "is empty"),
    ("train-vector", "{}", "is empty"),
])
def test_a_bad_config_is_one_line_before_the_run_folder_exists(tmp_path, capsys, monkeypatch, trainer, text,
                                                                message):
    from cardenvs.cli import main

    monkeypatch.chdir(tmp_path)  # an empty config trained every default into runs/ring_rang (of the cwd)
    run_dir = tmp_path / "run"
    config = tmp_path / "config.yaml"
    config.write_text(text.replace("RUN", str(run_dir)))
    assert main([trainer, "--config", str(config)]) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1, error[:500]
    assert not run_dir.exists() and not (tmp_path / "runs").exists()


def test_dev_null_is_refused(capsys):
    from cardenvs.cli import main

    assert main(["train-vector", "--config", os.devnull]) == 2
    assert "is empty" in capsys.readouterr().err


# ----------------------------------------------------------------- item 14: search budgets, NaN, games by identity
@pytest.mark.parametrize(("spec", "game"), [("ismcts:c=nan", "ring_rang"), ("pimc:ms=nan", "ring_rang"),
                                            ("pimc:win_bonus=nan", "rang"), ("ismcts:ms=inf", "rang"),
                                            ("oracle:win_bonus=inf", "rang")])
def test_search_parameters_that_are_not_finite_are_refused(spec, game):
    from cardenvs.agents.registry import check_agent

    with pytest.raises(ValueError, match="must be a"):  # before: NaN passed and the first legal action was played
        check_agent(spec, game, **({"num_players": 4} if game == "rang" else {}))


@pytest.mark.parametrize("spec", ["pimc:worlds=3000000,ms=100,iterations=40",
                                  "oracle:sees=hands,worlds=3000000,ms=100,iterations=40"])
def test_a_time_budget_counts_the_sampling_of_worlds(monkeypatch, spec):
    """Only the worlds the iterations can visit are drawn once a budget is set (before: every one of 3,000,000,
    before the clock was read)."""
    import math

    from cardenvs import rang_v0
    from cardenvs.agents.registry import make_agent
    from cardenvs.rang.search import RangRules

    drawn = []
    sample, shuffled_stock = RangRules.sample, RangRules.shuffled_stock
    monkeypatch.setattr(RangRules, "sample", lambda self, *a: drawn.append(1) or sample(self, *a))
    monkeypatch.setattr(RangRules, "shuffled_stock", staticmethod(lambda *a: drawn.append(1) or shuffled_stock(*a)))
    env = rang_v0.env(num_players=4)
    env.reset(seed=3)
    agent = make_agent(spec, "rang", seed=0, num_players=4)
    decisions = 0
    while decisions < 5 and env.agents:
        legal = env.unwrapped.legal_actions()
        before = len(drawn)
        action = agent.act(env.observe(env.agent_selection), env)
        if len(legal) > 1:
            assert len(drawn) - before <= math.ceil(40 / len(legal))
            decisions += 1
        env.step(action)


def test_rang_search_memory_knows_its_game_by_identity_not_by_a_reusable_id():
    import gc
    import random

    from cardenvs import rang_v0
    from cardenvs.agents.registry import make_agent
    from cardenvs.rang.search import RangDiscardMemory

    env = rang_v0.env(num_players=3)
    env.reset(seed=11)
    agent = make_agent("pimc:iterations=6,worlds=2", "rang", seed=0, num_players=3)
    saved, rng = [], random.Random(2)
    while env.agents and len(saved) < 20:
        if rng.random() < 0.5:
            saved.append(env.unwrapped.snapshot())
        env.step(agent.act(env.observe(env.agent_selection), env))
    assert len(saved) == 20
    rng.shuffle(saved)
    for snapshot in saved:  # the scenario: one agent, positions restored into fresh envs (ids reused)
        fresh = rang_v0.env(num_players=3)
        fresh.restore(snapshot)
        agent.act(fresh.observe(fresh.agent_selection), fresh)
        del fresh
        gc.collect()
    memory, game = RangDiscardMemory(), env.unwrapped.game.clone()
    seat = game.current
    memory.record(game, seat, 0)
    memory.cards = [1]
    memory.refresh(game.clone())  # another game object in the very same state: not the game remembered
    assert memory.cards == []


# ----------------------------------------------------------------- item 15: smaller ones
def test_bench_json_to_a_folder_is_refused_before_any_loop(tmp_path, capsys, monkeypatch):
    import cardenvs.bench as bench

    monkeypatch.setattr(bench, "our_loops", lambda *a: pytest.fail("a loop ran"))
    assert bench.main(["--json", str(tmp_path), "--seconds", "0.1"]) == 2
    assert "is a folder; give a file name such as" in capsys.readouterr().err
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked").chmod(0o500)
    if not os.access(tmp_path / "locked", os.W_OK):  # (root writes anywhere)
        assert bench.main(["--json", str(tmp_path / "locked" / "b.json")]) == 2
        assert "cannot write there" in capsys.readouterr().err


def test_eval_out_does_not_overwrite_earlier_results_unless_asked(tmp_path, capsys):
    from cardenvs.train.evaluate import main

    argv = ["--game", "rang", "--agents", "random", "rules_basic", "--deals", "2", "--out", str(tmp_path),
            "--no-progress"]
    assert main(argv) == 0
    first = (tmp_path / "results.json").read_text()
    capsys.readouterr()
    assert main([*argv[:5], "random", "--deals", "3", *argv[7:]]) == 2
    error = capsys.readouterr().err
    assert "already holds results.json" in error and error.count("\n") == 1
    assert (tmp_path / "results.json").read_text() == first
    assert main([*argv, "--overwrite"]) == 0


@pytest.mark.parametrize("edit", ["deep options", "5000-digit seed", "huge seed", "deep actions", "env a list",
                                  "env an object"])
def test_a_crafted_replay_record_is_one_line_naming_the_file(tmp_path, capsys, edit):
    from cardenvs.replay import main

    path = tmp_path / "game.json"
    text = '{"format": "cardenvs-replay", "version": 1, "env": "rang", "env_kwargs": {}, "seed": SEED, ' \
           '"options": OPTIONS, "actions": ACTIONS}'  # fmt: skip
    seed, options, actions = "1", "null", "[]"
    if edit == "deep options":
        options = '{"a": ' + "[" * 3000 + "]" * 3000 + "}"
    elif edit == "5000-digit seed":
        seed = "7" * 5000
    elif edit == "huge seed":
        seed = "9" * 200
    elif edit.startswith("env"):  # found by the fuzzer: a TypeError (unhashable) before
        text = text.replace('"rang"', "[]" if edit == "env a list" else "{}")
    else:
        actions = "[" * 3000 + "]" * 3000
    path.write_text(text.replace("SEED", seed).replace("OPTIONS", options).replace("ACTIONS", actions))
    assert main([str(path)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"error: {path}: ") and error.count("\n") == 1, error[:300]


def test_a_record_with_deep_options_is_refused_when_made():
    from cardenvs.replay import record

    options: dict = {"a": []}
    for _ in range(3000):
        options = {"a": [options]}
    with pytest.raises(ValueError, match="options is nested more than 20 levels deep"):
        record("rang", {}, 1, options, [])


# ----------------------------------------------------------------- the fuzzer, extended (scripts/fuzz.py)
@pytest.mark.parametrize("game", ["rang", "ring_rang"])
def test_fuzz_the_apps_and_crafted_policies_configs_and_batched_states(game):
    """A few rounds of the fuzzer's new parts (the long runs: scripts/fuzz.py --minutes 5)."""
    import random

    from fuzz_script import fuzz

    stats, rng = fuzz.Stats(), random.Random(34)
    for _ in range(2):
        fuzz.fuzz_apps(game, rng, stats)
        fuzz.fuzz_policies(game, rng, stats)
        fuzz.fuzz_batched_states(game, rng, stats)
        fuzz.fuzz_configs(rng, stats)
    assert stats.failures == []
    crafted = {kind.split(":")[0] for kind in stats.bad_by_kind if kind.startswith("crafted")}
    assert stats.app_requests >= 200 and stats.app_games >= 2 and len(crafted) >= 4, (stats.bad_by_kind, crafted)
