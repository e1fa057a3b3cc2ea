"""Play in the browser against agents: ``cardenvs serve --game ring-rang`` / ``cardenvs serve --game rang``.

A small local web server (standard library only: :mod:`http.server`) serves one
self-contained page (inline CSS/JS, nothing fetched from elsewhere) and a few
JSON endpoints. The person takes one seat (``--seat``); the other seats are
registry agents (``--opponents``, and ``--partner`` in RING RANG). The page
gets only what that seat may know: its own hand, the table, the public counts,
and the log of moves as :mod:`cardenvs.play` tells them in the terminal. The
seed (which would give away every hand) is sent only once the game is over.
When it is over (or given up) the game log downloads as the JSON record that
``cardenvs play --record`` writes and ``cardenvs replay`` reads.

Endpoints (all under ``/api/`` need the page's token, in the ``X-Cardenvs-Token``
header or a ``token`` query parameter)::

    GET  /                 the page
    GET  /api/state        the seat's view, its legal moves, the log
    POST /api/move         {"action": int, "turn": int}: play a move (turn = the state's turn, against double clicks)
    POST /api/resign       give the game up (its record becomes downloadable)
    POST /api/new          deal a new game (from a fresh random seed)
    GET  /api/record       the record (JSON attachment), once the game is over

The server binds 127.0.0.1 by default. On every bind address it answers only
requests whose ``Host`` names it (an IP address, ``localhost``, the name it was
bound to, this machine's names when bound to all addresses): a page of another
site that rebinds its name to this machine is refused. No page may frame it
(``X-Frame-Options``, ``frame-ancestors``). Reads time out, the body of a
request is read before the game is locked, and at most :data:`MAX_CONNECTIONS`
connections are open (the longest idle one makes way for a new one), so slow
or idle clients cannot stall the game for others. A client that goes away
mid-reply (a closed tab, an evicted connection) is no error and prints nothing;
what the server does print (``--verbose``'s request log, a bug's traceback)
goes through :class:`ServerLog`, so a full stderr (a pipe nobody reads) never
blocks an answer.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import json
import queue
import secrets
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cardenvs.games import default_game, episodes_help, game_spec, games_help, players_help
from cardenvs.play import TerminalGame, default_opponent

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")
MAX_BODY = 4096
MAX_CONNECTIONS = 64  # open connections at once; past it the longest idle one is closed
SOCKET_TIMEOUT = 10.0  # seconds a read from a client may wait
LOG_ROOM = 1000  # lines the server's log holds while stderr cannot take them; past it, lines are dropped
GONE = (ConnectionError, TimeoutError)  # the client went away or stopped sending: no reply, nothing to log


class MoveError(ValueError):
    """A request the game cannot take now (not the seat's turn, an illegal move, a stale page)."""


# ------------------------------------------------------------------ one game
class WebGame(TerminalGame):
    """One game played through the page: the env loop of :class:`~cardenvs.play.TerminalGame`, one step at a time.

    The agents move as soon as it is their turn (:meth:`advance`); the person's move comes from :meth:`move`.
    """

    def __init__(
        self, game_name: str, env_kwargs: dict[str, Any], seat: int, opponents: Sequence[str], seed: int
    ) -> None:
        super().__init__(game_name, env_kwargs, seat, opponents, seed, color=False)
        self.log: list[str] = []
        self.resigned = False
        self.env.reset(seed=seed)
        for agent in self.agents.values():
            agent.reset(seed=None)
        self.log.append(self.intro())
        self.advance()

    # ------------------------------------------------------------- the loop
    @property
    def over(self) -> bool:
        return not self.env.agents

    @property
    def finished(self) -> bool:
        """Over, or given up: the record may be shown (it holds the seed, hence every hand)."""
        return self.over or self.resigned

    def _skip_finished(self) -> None:
        env = self.env
        while env.agents and (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
            env.step(None)

    def _seat_to_act(self) -> int:
        return self.raw.possible_agents.index(self.env.agent_selection)

    def _step(self, seat: int, action: int) -> None:
        before = self.text.facts()
        self.env.step(action)
        self.actions.append(int(action))
        self.log.extend(self.text.events(seat, action, before))
        self._skip_finished()
        if self.over:
            self.log.append(self.text.result())

    def advance(self, limit: int = 100_000) -> None:
        """Let the agents move until it is the person's turn or the game is over."""
        self._skip_finished()
        for _ in range(limit):
            if self.over or self.resigned:
                return
            seat = self._seat_to_act()
            if seat == self.seat:
                return
            agent = self.agents[seat]
            if getattr(agent, "needs_env", False):  # search agents read the env, as in train/evaluate.py
                agent.observe_env(self.env)
            self._step(seat, agent.act(self.env.observe(self.env.agent_selection)))
        raise RuntimeError(f"the agents made {limit} moves without the game ending or the person's turn coming")

    def human_to_act(self) -> bool:
        return not self.finished and self._seat_to_act() == self.seat

    def moves(self) -> list[dict[str, Any]]:
        """The person's legal moves: ``action``, ``label`` (as in the terminal), ``codes`` (the own cards that
        select it by a click in the hand), ``face`` (a card to draw on its button, or None) and ``text`` (the
        button's caption beside the face)."""
        if not self.human_to_act():
            return []
        spec = game_spec(self.game_name)
        faces = spec.part("faces") if spec.has_part("faces") else label_faces
        return [_move(choice.action, choice.label, *faces(self.raw.game, self.seat, choice.action, choice.label))
                for choice in self.text.choices(self.env.legal_actions())]

    def move(self, action: Any, turn: Any = None) -> None:
        """Play the person's move (MoveError if it is not theirs to make), then the agents' moves."""
        if turn is not None and turn != len(self.actions):
            raise MoveError("the page is out of date: reload it")
        if not self.human_to_act():
            raise MoveError("it is not your turn" if not self.finished else "the game is over")
        legal = [int(a) for a in self.env.legal_actions()]
        if isinstance(action, bool) or not isinstance(action, int) or action not in legal:
            raise MoveError(f"{action!r:.40} is not a legal move now")
        self._step(self.seat, action)
        self.advance()

    def resign(self) -> None:
        if not self.finished:
            self.resigned = True
            self.log.append("=== you gave the game up")

    # ------------------------------------------------------------- what the page gets
    def intro(self) -> str:
        """As :meth:`TerminalGame.intro`, without the seed (it would give every hand away)."""
        return f"=== {self.heading}; you are player_{self.seat}. Seats: " + ", ".join(self.seat_names())

    def seat_names(self) -> list[str]:
        names = []
        for seat, spec in enumerate(self.specs):
            names.append(f"player_{seat}{self.text.where(seat)}: {'you' if seat == self.seat else spec}")
        return names

    def state(self) -> dict[str, Any]:
        """Everything the page shows, from the person's seat only (no other hand, no seed until the end)."""
        from cardenvs.render import env_view

        to_act = self.human_to_act()
        table = ""
        if to_act:
            table = self.text.table().strip("\n")
        view = env_view(self.env, observer=self.seat)
        moves = self.moves()
        selectable = {code for move in moves for code in move["codes"]}
        why_not = {code: self.text.why_not(code) or "not a legal move now"  # the terminal's words for a click
                   for code in (view["seats"][self.seat]["cards"] or []) if to_act and code not in selectable}
        return {
            "game": self.game_name,
            "seat": self.seat,
            "seats": self.seat_names(),
            "turn": len(self.actions),
            "view": view,
            "to_act": to_act,
            "moves": moves,
            "why_not": why_not,
            "table_text": table,
            "log": list(self.log),
            "over": self.over,
            "finished": self.finished,
            "seed": self.seed if self.finished else None,
        }

    def to_record(self) -> dict[str, Any]:
        """The game as a replay record (:mod:`cardenvs.replay`), once it is over or given up."""
        from cardenvs.replay import record

        if not self.finished:
            raise MoveError("the game log is ready once the game is over (or given up)")
        return record(self.game_name, self.env_kwargs, self.seed, None, self.actions, self.specs)


def label_faces(game: Any, seat: int, action: int, label: str) -> tuple[list[str], str | None, str]:
    """The faces of a move in a game that declares none: no card selects it; its button says its label."""
    return [], None, label


def _move(action: int, label: str, codes: list[str], face: str | None, text: str) -> dict[str, Any]:
    return {"action": int(action), "label": label, "codes": codes, "face": face, "text": text}


# ------------------------------------------------------------------ the server
def fresh_seed() -> int:
    """A game's seed from the operating system's entropy: no earlier game's seed tells anything about it."""
    return secrets.randbelow(2**31)


class App:
    """The served game and how to deal the next one; one request at a time touches the game.

    Every game after the first is dealt from :func:`fresh_seed` (``first_seed`` given or not): a seed shown
    at the end of one game must not tell the person the hands of the next (as ``seed + 1`` did)."""

    def __init__(self, new_game: Callable[[int], WebGame], first_seed: int | None = None,
                 title: str = "cardenvs serve") -> None:
        self.new_game = new_game
        self.seed = fresh_seed() if first_seed is None else first_seed
        self.title = title
        self.token = secrets.token_urlsafe(18)
        self.lock = threading.Lock()
        self.game = new_game(self.seed)

    def next_game(self) -> None:
        self.seed = fresh_seed()
        self.game = self.new_game(self.seed)


class ServerLog:
    """The server's lines to stderr, written by a thread of their own from a bounded queue.

    A request never writes to stderr itself: with stderr a pipe nobody drains, a write blocks once the pipe is
    full, and every thread that logged would wait there for ever (as every request thread did, so the server
    never answered again). Here only the writer thread waits; lines past :data:`LOG_ROOM` are dropped and
    counted, and the count is written once stderr takes lines again.
    """

    def __init__(self, stream: Any = None, room: int = LOG_ROOM) -> None:
        self.stream = stream  # None: sys.stderr when a line is written
        self.lines: queue.Queue[str] = queue.Queue(room)
        self.dropped = 0
        self.writer: threading.Thread | None = None
        self.start_lock = threading.Lock()

    def write(self, text: str) -> None:
        """Queue ``text`` (one or more lines); never blocks."""
        try:
            self.lines.put_nowait(text.rstrip("\n"))
        except queue.Full:
            self.dropped += 1
        if self.writer is None:
            with self.start_lock:
                if self.writer is None:
                    self.writer = threading.Thread(target=self._write_lines, name="cardenvs-serve-log", daemon=True)
                    self.writer.start()

    def _write_lines(self) -> None:
        while True:
            text = self.lines.get()
            stream = self.stream or sys.stderr
            try:
                if self.dropped:
                    dropped, self.dropped = self.dropped, 0
                    stream.write(f"cardenvs serve: {dropped} log line(s) dropped (stderr was not read)\n")
                stream.write(text + "\n")
                stream.flush()
            except (OSError, ValueError):  # stderr closed: nothing more can be told
                pass


class _Server(ThreadingHTTPServer):
    """A threading server with a bound on its connections: at :data:`MAX_CONNECTIONS`, the connection idle
    the longest (no request under way) is closed for a new one, so idle sockets cannot use up threads or
    descriptors; every socket read has a timeout (:attr:`_Handler.timeout`)."""

    daemon_threads = True
    request_queue_size = 128  # the listen backlog: a burst of connections waits for accept(), not SYN retries

    def __init__(self, address: tuple[str, int], handler: type, family: int) -> None:
        self.address_family = family
        self.connections: dict[Any, float | None] = {}  # socket -> idle since (monotonic), None: busy
        self.connections_lock = threading.Lock()
        self.log = ServerLog()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            if len(self.connections) >= MAX_CONNECTIONS:
                idle = [(since, sock) for sock, since in self.connections.items() if since is not None]
                if not idle:
                    self.shutdown_request(request)  # every connection is busy: refuse this one
                    return
                _, oldest = min(idle, key=lambda pair: pair[0])
                self.connections.pop(oldest)
                with contextlib.suppress(OSError):
                    oldest.shutdown(socket.SHUT_RDWR)  # its thread's read ends, and the thread with it
            self.connections[request] = time.monotonic()
        super().process_request(request, client_address)

    def mark(self, request: Any, busy: bool) -> None:
        with self.connections_lock:
            if request in self.connections:
                self.connections[request] = None if busy else time.monotonic()

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.pop(request, None)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """What escaped a request's handler: nothing for a client that went away, else a short traceback in
        the log (socketserver printed every one to stderr, blocking on a full one)."""
        error = sys.exc_info()[1]
        if isinstance(error, GONE):
            return
        self.log.write(f"cardenvs serve: error with a request from {client_address[0]}: {error!r}\n"
                       + "".join(traceback.format_exc(limit=-8))[-4000:])


def make_server(app: App, host: str = "127.0.0.1", port: int = 0, verbose: bool = False) -> ThreadingHTTPServer:
    """A server bound to (host, port) serving ``app`` (``port=0``: a free port; see ``server.server_address``)."""

    class Handler(_Handler):
        pass

    Handler.app = app
    Handler.allowed_hosts = allowed_host_names(host)
    Handler.quiet = not verbose
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    return _Server((host.strip("[]"), port), Handler, family)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_host_names(host: str) -> frozenset[str]:
    """The names (besides IP literals) a request's ``Host`` may carry: those this server is reached by.

    A page of another site that rebinds its own name to this machine's address sends that name: it is refused.
    An IP literal cannot be rebound, so any is taken (``--host 127.0.0.2`` serves its own printed URL). Bound
    to a loopback address: ``localhost``; bound to a name or to every address (``0.0.0.0``, ``::``): that
    name and this machine's names too.
    """
    names = {"localhost", host.strip("[]").lower()}
    if not _is_loopback(host):
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    return frozenset(names)


def host_allowed(header: str, allowed: frozenset[str]) -> bool:
    """Whether a ``Host`` header (``name``, ``name:port``, ``[v6]:port``) names this server."""
    host = header.strip().lower()
    if host.startswith("["):
        name = host[1:host.find("]")] if "]" in host else ""
        try:
            return ipaddress.ip_address(name).version == 6
        except ValueError:
            return False
    name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    try:
        ipaddress.IPv4Address(name)
        return True
    except ValueError:
        return bool(name) and name.rstrip(".") in allowed


class _Handler(BaseHTTPRequestHandler):
    app: App
    allowed_hosts: frozenset[str] = frozenset(LOOPBACK_NAMES)
    server_version = "cardenvs-serve"
    timeout = SOCKET_TIMEOUT  # seconds a read may wait (request line, headers, body): a slow client lets go
    quiet = True

    def handle_one_request(self) -> None:
        self.server.mark(self.request, busy=False)  # waiting for a request: may be closed for a new connection
        try:
            super().handle_one_request()
        except GONE:  # a timeout, or the client (or an eviction) closed the connection: nothing to answer
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class names it so)
        if not self.quiet:  # as http.server writes it, through the log that never blocks
            text = format % args
            table = getattr(self, "_control_char_table", None)  # http.server's escaping, where it has one
            self.server.log.write(f"{self.address_string()} - - [{self.log_date_time_string()}] "
                                  f"{text.translate(table) if table else text}")

    # ------------------------------------------------------------- replies
    def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")  # no other page may frame this one (clickjacking)
        if "Content-Security-Policy" not in (headers or {}):
            self.send_header("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(data).encode("utf-8"), "application/json; charset=utf-8", headers)

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    # ------------------------------------------------------------- checks
    def _host_ok(self) -> bool:
        return host_allowed(self.headers.get("Host") or "", self.allowed_hosts)

    def _token_ok(self, query: dict[str, list[str]]) -> bool:
        given = self.headers.get("X-Cardenvs-Token") or (query.get("token") or [""])[0]
        return secrets.compare_digest(given.encode(), self.app.token.encode())

    def _route(self, method: str) -> None:
        self.server.mark(self.request, busy=True)
        try:
            self._answer(method)
        except GONE:
            self.close_connection = True  # the client stopped sending or went away: no reply, the connection closes
        except Exception as error:  # noqa: BLE001 - a bug must not leave the client with an empty reply
            # always (log_message is quiet without --verbose), through the log that never blocks
            self.server.log.write("".join(traceback.format_exc(limit=-8))[-4000:]
                                  + f"cardenvs serve: error answering {method} {self.path[:200]}: {error!r}")
            self.close_connection = True
            with contextlib.suppress(OSError):
                self._error(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error (see the server's log)")

    def _answer(self, method: str) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if not self._host_ok():
            self.close_connection = True
            self._error(HTTPStatus.FORBIDDEN, "bad Host header")
            return
        if method == "GET" and url.path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, page(self.app).encode("utf-8"), "text/html; charset=utf-8",
                       {"Content-Security-Policy": CSP})  # fmt: skip
            return
        if method == "GET" and url.path in ("/favicon.ico", "/favicon.svg"):  # browsers ask for it: no 404
            self._send(HTTPStatus.OK, FAVICON, "image/svg+xml")
            return
        if not url.path.startswith("/api/"):
            self._error(HTTPStatus.NOT_FOUND, "not found")
            return
        if not self._token_ok(query):
            self._error(HTTPStatus.FORBIDDEN, "missing or wrong token: reload the page")
            return
        routes = {
            ("GET", "/api/state"): self._state,
            ("GET", "/api/record"): self._record,
            ("POST", "/api/move"): self._move,
            ("POST", "/api/resign"): self._resign,
            ("POST", "/api/new"): self._new,
        }
        handler = routes.get((method, url.path))
        if handler is None:
            self._error(HTTPStatus.NOT_FOUND if url.path not in {p for _, p in routes} else 405, "no such endpoint")
            return
        try:
            body = self._body() if method == "POST" else {}  # read whole before the game's lock is taken
            with self.app.lock:
                handler(body)
        except MoveError as error:
            self._error(HTTPStatus.CONFLICT, str(error))
        except ValueError as error:
            self._error(HTTPStatus.BAD_REQUEST, str(error))

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self._route("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._route("POST")

    def do_PUT(self) -> None:  # noqa: N802 (every other method: a JSON 405 or 404, not http.server's HTML 501)
        self._route("PUT")

    do_DELETE = do_PATCH = do_OPTIONS = do_PUT  # noqa: N815

    # ------------------------------------------------------------- endpoints
    def _body(self) -> dict[str, Any]:
        text = self.headers.get("Content-Length") or "0"
        if not text.isdigit():
            self.close_connection = True
            raise ValueError(f"bad Content-Length {text[:20]!r}")
        length = int(text)
        if length > MAX_BODY:
            self.close_connection = True  # the body is not read: the connection cannot carry another request
            raise ValueError("request body too large")
        raw = self.rfile.read(length)  # a timeout (SOCKET_TIMEOUT) if the client sends less than it declared
        if len(raw) < length:
            self.close_connection = True
            raise ValueError("the body ended before its Content-Length")
        if not (self.headers.get("Content-Type") or "").startswith("application/json"):
            raise ValueError("the body must be JSON (Content-Type: application/json)")
        try:
            data = json.loads(raw or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ValueError(f"the body is not JSON: {error}") from None
        except RecursionError:
            raise ValueError("the body is nested too deeply") from None
        if not isinstance(data, dict):
            raise ValueError("the body must be a JSON object")
        return data

    def _state(self, body: dict[str, Any]) -> None:
        self._json(HTTPStatus.OK, self.app.game.state())

    def _move(self, body: dict[str, Any]) -> None:
        self.app.game.move(body.get("action"), body.get("turn"))
        self._json(HTTPStatus.OK, self.app.game.state())

    def _resign(self, body: dict[str, Any]) -> None:
        self.app.game.resign()
        self._json(HTTPStatus.OK, self.app.game.state())

    def _new(self, body: dict[str, Any]) -> None:
        self.app.next_game()
        self._json(HTTPStatus.OK, self.app.game.state())

    def _record(self, body: dict[str, Any]) -> None:
        game = self.app.game
        data = game.to_record()
        name = f"cardenvs-{game.game_name}-seed{game.seed}.json"
        body = (json.dumps(data, indent=1) + "\n").encode("utf-8")  # as cardenvs.replay.save writes it
        self._send(HTTPStatus.OK, body, "application/json; charset=utf-8",
                   {"Content-Disposition": f'attachment; filename="{name}"'})  # fmt: skip


# ------------------------------------------------------------------ the page
CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; img-src 'self'; "
       "frame-ancestors 'none'")

FAVICON = (b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="5" y="2" width="22" height="28" '
           b'rx="3" fill="#fcfcf6" stroke="#1c603a" stroke-width="2"/><text x="16" y="22" font-size="16" '
           b'text-anchor="middle" fill="#141414">&#9824;</text></svg>')

_PAGE_CSS = """
#bar{flex-wrap:wrap}#bar .title{font-weight:bold;margin-right:12px}#status{color:#fd6;min-width:12em}
#bar a,#bar button{color:#eee;background:#2a4a60;border:1px solid #6a8aa0;border-radius:4px;padding:3px 9px;
 text-decoration:none;font-size:14px;cursor:pointer}
#bar a.off,#bar button:disabled{opacity:.35;pointer-events:none;cursor:default}
#main{display:flex;gap:8px;align-items:flex-start}#left{flex:1;min-width:600px}
#side{width:340px;margin:8px 8px 0 0}@media (max-width:1200px){#side{width:270px}}
#moves{margin:0 8px;padding:4px 8px;background:#0b1a26;border-radius:8px;min-height:64px}
#moves button.move{margin:4px;padding:4px;background:#2a4a60;color:#eee;border:2px solid #fd6;
 border-radius:6px;cursor:pointer;font-size:14px;vertical-align:middle;min-height:60px}
#moves button.move .card{margin-right:4px;box-shadow:none}
#moves button:disabled,.busy #moves button{opacity:.5;cursor:wait}
.card.legal{cursor:pointer;outline:3px solid #fd6;outline-offset:-3px;position:relative}
.card.legal:hover{top:-8px}
#tabletext,#log{box-sizing:border-box;background:#0b1a26;border-radius:8px;padding:8px;font-size:12px;
 white-space:pre-wrap;margin:0 0 8px}
#log{height:calc(100vh - 330px);min-height:120px;overflow-y:auto}#error{color:#f88;padding:0 12px}
.card.mine{cursor:not-allowed}
"""

_PAGE_JS = """
const TOKEN = document.getElementById('token').textContent;
let state = null;
function api(method, path, body){
  const init = {method: method, headers: {'X-Cardenvs-Token': TOKEN}};
  if (body !== undefined){ init.headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(body); }
  return fetch(path, init).then(r => r.json().then(d => {
    if (!r.ok) throw new Error(d.error || r.status);
    return d;
  }));
}
function busy(on){
  document.body.classList.toggle('busy', on);
  document.body.dataset.busy = on ? '1' : '0';
  if (on) document.getElementById('status').textContent = 'the agents are thinking...';
}
function send(method, path, body){
  if (document.body.dataset.busy === '1') return;
  busy(true);
  document.getElementById('error').textContent = '';
  api(method, path, body).then(draw).catch(e => {
    document.getElementById('error').textContent = String(e.message || e);
    busy(false);
    if (state) document.getElementById('status').textContent = state.to_act ? 'your move' : '';
  });
}
function play(action){ send('POST', '/api/move', {action: action, turn: state.turn}); }
function attr(t){return esc(t).replace(/"/g, '&quot;');}
function moveButton(m){
  const face = m.face === null ? '' : card(m.face);
  return '<button class="move" data-action="' + m.action + '" title="' + attr(m.label) + '">' + face +
    esc(m.text) + '</button>';
}
function markHand(s){
  const v = s.view;
  const box = document.querySelector('#table [data-seat="' + s.seat + '"]');
  if (!box || !s.to_act) return;
  const cards = box.querySelectorAll('.card'), codes = v.seats[s.seat].cards || [];
  cards.forEach((el, i) => {
    const hits = s.moves.filter(m => m.codes.includes(codes[i]));
    if (hits.length === 0) {  // say why, as the terminal does, instead of doing nothing
      el.classList.add('mine');
      el.title = s.why_not[codes[i]] || 'not a legal move now';
      el.onclick = () => { document.getElementById('error').textContent = el.title; };
    }
    if (hits.length !== 1) return;
    el.classList.add('legal');
    el.dataset.action = hits[0].action;
    el.title = hits[0].label;  // a property, not HTML: no escaping needed
    el.onclick = () => play(hits[0].action);
  });
}
function draw(s){
  state = s;
  const v = s.view;
  document.getElementById('table').innerHTML = tableHtml(v);
  markHand(s);
  const moves = document.getElementById('moves');
  moves.innerHTML = s.to_act ? '<div>your move (click a button or a marked card):</div>' +
    s.moves.map(moveButton).join('') : (s.finished ? '<div>game over</div>' : '');
  moves.querySelectorAll('button.move').forEach(b => { b.onclick = () => play(Number(b.dataset.action)); });
  document.getElementById('seats').textContent = s.seats.join('  |  ');
  document.getElementById('tabletext').textContent = s.table_text;
  document.getElementById('tabletext').style.display = s.table_text ? '' : 'none';
  const log = document.getElementById('log');
  log.textContent = s.log.join('\\n');
  log.scrollTop = log.scrollHeight;
  const link = document.getElementById('download');
  link.classList.toggle('off', !s.finished);
  link.href = s.finished ? '/api/record?token=' + encodeURIComponent(TOKEN) : '#';
  link.download = s.finished ? 'cardenvs-' + s.game + '-seed' + s.seed + '.json' : '';
  document.getElementById('resign').disabled = s.finished;
  document.getElementById('status').textContent = s.finished ? (s.over ? 'game over' : 'given up') +
    ' (seed ' + s.seed + ')' : (s.to_act ? 'your move' : '');
  document.body.dataset.turn = s.turn;
  document.body.dataset.over = s.finished ? '1' : '0';
  busy(false);
}
document.getElementById('resign').onclick = () => {
  if (confirm('Give this game up?')) send('POST', '/api/resign', {});
};
document.getElementById('new').onclick = () => {
  if (state.finished || confirm('Abandon this game and deal a new one?')) send('POST', '/api/new', {});
};
busy(true);
api('GET', '/api/state').then(draw).catch(e => { document.getElementById('error').textContent = String(e); });
"""

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<style>
__CSS__</style></head><body data-busy="1" data-turn="-1" data-over="0">
<div id="bar"><span class="title">__TITLE__</span><span id="status"></span>
<button id="new" title="deal a new game (from a fresh random seed)">new game</button>
<button id="resign" title="end this game now (its log becomes downloadable)">give up</button>
<a id="download" class="off" href="#">download game log (replay JSON)</a></div>
<div id="seats" style="padding:4px 12px;font-size:13px"></div><div id="error"></div>
<div id="main"><div id="left"><div id="table"></div><div id="moves"></div></div>
<div id="side"><pre id="tabletext"></pre><pre id="log"></pre></div></div>
<script id="token" type="text/plain">__TOKEN__</script>
<script>
__JS__</script></body></html>
"""


def page(app: App) -> str:
    """The self-contained page: the replay's table drawing (render.table_css/table_js) plus the controls."""
    from cardenvs.render import table_css, table_js

    title = app.title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (
        _PAGE.replace("__CSS__", table_css([app.game.game_name]) + _PAGE_CSS)
        .replace("__JS__", table_js([app.game.game_name]) + _PAGE_JS)
        .replace("__TITLE__", title)
        .replace("__TOKEN__", app.token)
    )


# ------------------------------------------------------------------ CLI
def seat_specs(game_name: str, num_players: int, seat: int, opponents: Sequence[str], partner: str | None) -> list[str]:
    """The agent spec of every other seat, in seat order (``opponents``: one spec, or one per opponent seat)."""
    if not 0 <= seat < num_players:
        raise ValueError(f"--seat must be 0..{num_players - 1}, got {seat}")
    others = [s for s in range(num_players) if s != seat]
    spec = game_spec(game_name)
    if not spec.partnerships and partner is not None:
        raise ValueError(f"--partner: {spec.title} has no partners (use --opponents)")
    partner_seats = [s for s in spec.seats_of_side(seat, num_players) if s != seat]
    opponent_seats = [s for s in others if s not in partner_seats]
    specs = list(opponents)
    if len(specs) == 1:
        specs = specs * len(opponent_seats)
    if len(specs) != len(opponent_seats):
        raise ValueError(f"--opponents: give 1 spec or {len(opponent_seats)} (one per opponent seat), got {len(specs)}")
    by_seat = dict(zip(opponent_seats, specs, strict=True))
    for s in partner_seats:
        by_seat[s] = partner if partner is not None else specs[0]
    return [by_seat[s] for s in others]


def main(argv: Sequence[str] | None = None) -> int:
    from cardenvs.replay import env_name

    parser = argparse.ArgumentParser(prog="cardenvs serve", description="Play a cardenvs game in the browser.")
    parser.add_argument("game", nargs="?", default=None,
                        help=f"{games_help()} (default {default_game()}), as in `cardenvs play`")
    parser.add_argument("--game", dest="game_option", metavar="GAME", default=None, help="the same as GAME")
    parser.add_argument(
        "--opponents",
        nargs="+",
        default=None,
        metavar="SPEC",
        help="agent spec for every opponent, or one per opponent seat (default: rules_strong, else random)",
    )
    parser.add_argument(
        "--partner", default=None, metavar="SPEC", help="a partnership game: your partner's agent spec "
        "(default: as opponents)"
    )
    parser.add_argument("--players", type=int, default=None, help=f"number of players ({players_help()})")
    parser.add_argument("--episode", default=None, help=f"what one game is ({episodes_help()}; default: the env's)")
    parser.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the first game (default: random; every later game is dealt from a fresh "
                             "random seed, shown when that game is over)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=0, help="port (default 0: a free one; the URL is printed)")
    parser.add_argument("--open", action="store_true", help="open the page in the default browser")
    parser.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = parser.parse_args(argv)
    try:
        if args.game and args.game_option and env_name(args.game) != env_name(args.game_option):
            raise ValueError(f"two games given: {args.game} and --game {args.game_option}")
        game_name = env_name(args.game or args.game_option or default_game())  # any spelling of a game
        spec = game_spec(game_name)
        num_players = spec.check_players(spec.players_or_fixed(None) if args.players is None else args.players,
                                         "--players")
        env_kwargs: dict[str, Any] = {} if spec.fixed_players else {"num_players": num_players}
        if args.episode is not None:
            env_kwargs["episode"] = args.episode
        if not 0 <= args.port <= 65535:
            raise ValueError(f"--port must be 0..65535, got {args.port}")
        if args.seed is not None and args.seed < 0:
            raise ValueError(f"--seed must be >= 0, got {args.seed}")
        opponents = args.opponents or [default_opponent(game_name)]
        specs = seat_specs(game_name, num_players, args.seat, opponents, args.partner)

        def new_game(game_seed: int) -> WebGame:
            return WebGame(game_name, env_kwargs, args.seat, specs, game_seed)

        title = spec.heading(num_players)
        app = App(new_game, args.seed, f"cardenvs serve: {title}")  # builds every agent: bad specs fail here
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        server = make_server(app, args.host, args.port, args.verbose)
    except OSError as error:
        print(f"error: cannot listen on {args.host}:{args.port}: {error.strerror or error}", file=sys.stderr)
        return 2
    host, port = server.server_address[:2]
    shown = f"[{host}]" if ":" in str(host) else host
    url = f"http://{'127.0.0.1' if shown in ('0.0.0.0', '[::]') else shown}:{port}/"
    print(f"cardenvs serve: {title} at {url}  (Ctrl-C stops)", flush=True)
    if not _is_loopback(args.host):
        print(f"warning: listening on {args.host}: other machines on the network can reach this page", flush=True)
    if args.open:
        import webbrowser

        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
