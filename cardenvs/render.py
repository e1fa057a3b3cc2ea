"""Pictures of the table: ``render_mode="rgb_array"`` images (Pillow) and a self-contained HTML replay.

Both drawings start from one *view*: a small JSON-ready dict of what the table
shows (:func:`ring_rang_view`, :func:`rang_view`), built from the engine state
in one place. :func:`draw_view` paints a view with Pillow into an ``HxWx3``
``uint8`` array; :func:`html_page` embeds a list of views (one per step) in an
HTML page that draws them with HTML/CSS and steps through them.

Whose hands are shown: ``observer=None`` (what ``env.render()`` uses, like the
text render) shows every hand face up; ``observer=seat`` shows only that
seat's hand, the others face down with their card counts.

Pillow is an optional dependency: ``pip install "cardenvs[render]"``. Pillow's
own default font is used (``ImageFont.load_default``), so images do not depend
on the fonts of the machine; where that font has no suit symbols (Pillow's
bundled font has none), the suits are drawn as small shapes.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from cardenvs.cards import CODES, SUITS
from cardenvs.games import GAMES

__all__ = ["ring_rang_view", "rang_view", "env_view", "draw_view", "html_page", "card_label"]

SUIT_SYMBOLS = "\u2663\u2666\u2665\u2660"
SEAT_NAMES = ("South", "West", "North", "East")  # RING RANG seats 0..3 around the table, clockwise


def card_label(code: str) -> tuple[str, int]:
    """``"TD"`` -> (``"10"``, 1): the rank as printed on a card and the suit index (-1 for the Joker)."""
    if code == "JK":
        return "JK", -1
    rank = code[:-1]
    return ("10" if rank == "T" else rank), SUITS.index(code[-1])


# ---------------------------------------------------------------------- views
def _hand_order(cards: list[int]) -> list[int]:
    """Display order of a RING RANG hand: by suit (clubs, diamonds, spades, hearts: colours alternate), high first."""
    suit_order = {0: 0, 1: 1, 3: 2, 2: 3}
    return sorted(cards, key=lambda c: (suit_order[c // 13], -(c % 13)))


def ring_rang_view(game: Any, observer: int | None = None) -> dict[str, Any]:
    """What the RING RANG table shows (``game`` is a :class:`~cardenvs.ring_rang.engine.RingRangGame`)."""
    from cardenvs.ring_rang.engine import HONOUR_NAMES, PHASE_NAMES, bits_to_cards

    seats = []
    for seat in range(4):
        cards = bits_to_cards(game.hands[seat])
        seats.append(
            {
                "name": f"player_{seat}",
                "team": seat & 1,
                "cards": [CODES[c] for c in _hand_order(cards)] if observer in (None, seat) else None,
                "count": len(cards),
                "to_act": seat == game.to_act and not game.over,
                "role": "chooser" if seat == game.chooser else "dealer" if seat == game.dealer else "",
                "knocks": [HONOUR_NAMES[h] for h, knocker in enumerate(game.knockers) if knocker == seat],
            }
        )
    view: dict[str, Any] = {
        "game": "ring_rang",
        "title": f"RING RANG - round {game.round_number + 1}",
        "phase": "over" if game.over else PHASE_NAMES[game.phase],
        "bottom": observer or 0,  # the seat drawn at the bottom (South): the observer's
        "trump": SUITS[game.trump] if game.trump >= 0 else None,
        "seats": seats,
        "trick": [{"seat": (game.leader + i) & 3, "card": CODES[c]} for i, c in enumerate(game.trick_cards)],
        "last_trick": None,
        "tricks_played": game.tricks_played,
        "pile": game.pile,
        "lifted": list(game.lifted),
        "scores": list(game.scores),
        "last_round": None,
        "result": None,
    }
    if game.history:
        leader, cards, winner, lift = game.history[-1]
        view["last_trick"] = {
            "cards": [{"seat": (leader + i) & 3, "card": CODES[c]} for i, c in enumerate(cards)],
            "winner": winner,
            "lifted": lift,
        }
    if game.rounds and (game.over or game.tricks_played == 0):
        last = game.rounds[-1]
        view["last_round"] = {
            "lifted": list(last["lifted"]),
            "winner_team": last["winner_team"],
            "points": last["points"],
        }
    if game.over:
        view["result"] = f"team {game.winner_team} (player_{game.winner_team} + player_{game.winner_team + 2}) wins"
    return view


def rang_view(game: Any, observer: int | None = None) -> dict[str, Any]:
    """What the Rang table shows (``game`` is a :class:`~cardenvs.rang.engine.RangGame`)."""
    from cardenvs.rang.engine import PHASE_NAMES

    seats = []
    for seat in range(game.num_players):
        seats.append(
            {
                "name": f"player_{seat}",
                "cards": [CODES[c] for c in game.hand_cards(seat)] if observer in (None, seat) else None,
                "count": game.hand_size[seat],
                "total": game.totals[seat],
                "alive": game.alive[seat],
                "to_act": seat == game.current and not game.match_over,
                "dealer": seat == game.dealer,
                "went_out": seat == game.out_seat,
                "points": game.last_points[seat] if game.deal_over and not game.truncated else None,
            }
        )
    result = None
    if game.match_over:
        if game.truncated:
            result = "deal truncated (turn limit)"
        elif game.single_deal:
            points = ", ".join(f"player_{s} {p}" for s, p in enumerate(game.last_points) if s != game.went_out)
            result = f"player_{game.went_out} went out; points: {points}"
        else:
            result = f"player_{game.alive.index(True)} wins the match"
    return {
        "game": "rang",
        "title": f"Rang - deal {game.deal_number} ({game.deck_size} cards)",
        "phase": "over" if game.match_over else PHASE_NAMES[game.phase],
        "top": CODES[game.pile[-1]],
        "stock": len(game.stock),
        "discard": len(game.discard),
        "seats": seats,
        "result": result,
    }


def env_view(env: Any, observer: int | None = None) -> dict[str, Any]:
    """The view of a cardenvs env (wrapped or not)."""
    raw = getattr(env, "unwrapped", env)
    if raw.game is None:
        raise RuntimeError("no table to show before reset()")
    if raw.metadata["name"] == "ring_rang_v0":
        return ring_rang_view(raw.game, observer)
    return rang_view(raw.game, observer)


# -------------------------------------------------------------------- Pillow
def _pillow() -> tuple[Any, Any, Any]:
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as error:
        raise ImportError(
            'render_mode="rgb_array" needs Pillow: pip install "cardenvs[render]" (or pip install pillow)'
        ) from error
    return Image, ImageDraw, ImageFont


TABLE = (28, 96, 58)
CARD_FACE = (252, 252, 246)
CARD_BACK = (44, 68, 150)
RED = (196, 24, 36)
BLACK = (20, 20, 20)
WHITE = (245, 245, 245)
GOLD = (250, 210, 80)
CARD_W, CARD_H = 42, 60


class _Painter:
    """Pillow drawing of cards and text on one image."""

    def __init__(self, width: int, height: int):
        Image, ImageDraw, ImageFont = _pillow()
        self.image = Image.new("RGB", (width, height), TABLE)
        self.draw = ImageDraw.Draw(self.image)
        self.font = _font(ImageFont, 15)
        self.big = _font(ImageFont, 20)
        self.glyphs = _has_suit_glyphs(Image, ImageDraw, self.font)

    def text(self, xy: tuple[float, float], text: str, fill=WHITE, big: bool = False) -> None:
        self.draw.text(xy, text, fill=fill, font=self.big if big else self.font)

    def suit(self, suit: int, cx: float, cy: float, size: float, fill) -> None:
        """A suit symbol centred at (cx, cy): the font's glyph if it has one, else a drawn shape."""
        if self.glyphs:
            font = self.big if size >= 14 else self.font
            self.draw.text((cx, cy), SUIT_SYMBOLS[suit], fill=fill, font=font, anchor="mm")
            return
        d, r = self.draw, size / 2
        if suit == 1:  # diamond
            d.polygon([(cx, cy - r), (cx + r * 0.75, cy), (cx, cy + r), (cx - r * 0.75, cy)], fill=fill)
            return
        if suit == 0:  # club: three balls and a stem
            b = r * 0.48
            for bx, by in ((cx, cy - r * 0.45), (cx - r * 0.5, cy + r * 0.15), (cx + r * 0.5, cy + r * 0.15)):
                d.ellipse([bx - b, by - b, bx + b, by + b], fill=fill)
            d.polygon([(cx, cy), (cx - r * 0.35, cy + r), (cx + r * 0.35, cy + r)], fill=fill)
            return
        b = r * 0.52  # hearts and spades: two lobes and a point
        flip = -1 if suit == 3 else 1
        lobe_y = cy - flip * r * 0.35
        for bx in (cx - r * 0.47, cx + r * 0.47):
            d.ellipse([bx - b, lobe_y - b, bx + b, lobe_y + b], fill=fill)
        d.polygon([(cx - r * 0.98, lobe_y + flip * r * 0.12), (cx + r * 0.98, lobe_y + flip * r * 0.12),
                   (cx, cy + flip * r)], fill=fill)  # fmt: skip
        if suit == 3:
            d.polygon([(cx, cy), (cx - r * 0.35, cy + r), (cx + r * 0.35, cy + r)], fill=fill)

    def card(self, x: float, y: float, code: str | None, highlight: bool = False) -> None:
        """A card with its top-left corner at (x, y); ``None`` draws its back."""
        box = [x, y, x + CARD_W, y + CARD_H]
        outline = GOLD if highlight else (90, 90, 90)
        if code is None:
            self.draw.rounded_rectangle(box, radius=5, fill=CARD_BACK, outline=WHITE, width=2)
            return
        self.draw.rounded_rectangle(box, radius=5, fill=CARD_FACE, outline=outline, width=3 if highlight else 1)
        rank, suit = card_label(code)
        if suit < 0:
            self.text((x + 4, y + 3), "JO", fill=RED)
            self.text((x + 4, y + 20), "KER", fill=RED)
            return
        color = RED if suit in (1, 2) else BLACK
        self.text((x + 3, y + 2), rank, fill=color)
        self.suit(suit, x + 10, y + 29, 11, color)  # the corner index stays visible when cards overlap
        self.suit(suit, x + CARD_W * 0.64, y + CARD_H * 0.7, 18, color)

    def row(self, x: float, y: float, codes: list[str | None], step: float, highlight: int = -1) -> None:
        for i, code in enumerate(codes):
            self.card(x + i * step, y, code, highlight=i == highlight)

    def array(self) -> np.ndarray:
        return np.asarray(self.image, dtype=np.uint8).copy()


def _font(ImageFont: Any, size: int) -> Any:
    try:
        return ImageFont.load_default(size=size)  # Pillow >= 10.1: scalable
    except TypeError:
        return ImageFont.load_default()


def _has_suit_glyphs(Image: Any, ImageDraw: Any, font: Any) -> bool:
    """True when the font draws the four suit symbols as real glyphs (not its missing-glyph box)."""

    def ink(text: str) -> bytes:
        image = Image.new("L", (40, 40), 0)
        ImageDraw.Draw(image).text((4, 4), text, fill=255, font=font)
        return image.tobytes()

    missing = ink("\ue000")  # a private-use code point: no font has a real glyph for it
    try:
        return all(ink(symbol) != missing for symbol in SUIT_SYMBOLS)
    except UnicodeEncodeError:  # a bitmap font that only knows Latin-1
        return False


def _seat_label(seat: dict[str, Any], extra: str = "") -> str:
    label = seat["name"]
    if seat.get("role"):
        label += f" ({seat['role']})"
    if seat.get("knocks"):
        label += " knocked " + " ".join(seat["knocks"])
    return label + extra


def draw_ring_rang(view: dict[str, Any]) -> np.ndarray:
    width, height = 960, 720
    p = _Painter(width, height)
    p.text((16, 10), view["title"], big=True)
    trump = view["trump"]
    p.text((300, 14), "trump:")
    if trump is None:
        p.text((355, 14), "-")
    else:
        suit = SUITS.index(trump)
        p.draw.rounded_rectangle([352, 8, 384, 36], radius=4, fill=CARD_FACE)
        p.suit(suit, 368, 22, 18, RED if suit in (1, 2) else BLACK)
    lifted, scores = view["lifted"], view["scores"]
    p.text((410, 14), f"tricks {view['tricks_played']}/13   pile {view['pile']}   lifted {lifted[0]} : {lifted[1]}")
    p.text((720, 14), f"score {scores[0]} : {scores[1]}  (team 0 : team 1)")
    seats = view["seats"]
    step_ns, step_we = 28, 22
    places = {  # seat -> (x, y) of its hand row, label position
        0: (width / 2 - (12 * step_ns + CARD_W) / 2, height - 88),
        2: (width / 2 - (12 * step_ns + CARD_W) / 2, 70),
        1: (16, height / 2 - CARD_H / 2),
        3: (width - 16 - (12 * step_we + CARD_W), height / 2 - CARD_H / 2),
    }
    for index, seat in enumerate(seats):
        x, y = places[index]
        step = step_ns if index in (0, 2) else step_we
        codes = seat["cards"] if seat["cards"] is not None else [None] * seat["count"]
        p.row(x, y, codes, step)
        label = f"{SEAT_NAMES[index]}: " + _seat_label(seat, f"  team {seat['team']}")
        p.text((x, y + CARD_H + 4 if index != 2 else y - 20), label, fill=GOLD if seat["to_act"] else WHITE)
    # the current trick in the middle, each card on its player's side
    cx, cy = width / 2, height / 2
    spots = {0: (cx - CARD_W / 2, cy + 10), 1: (cx - 80 - CARD_W, cy - CARD_H / 2),
             2: (cx - CARD_W / 2, cy - 10 - CARD_H), 3: (cx + 80, cy - CARD_H / 2)}  # fmt: skip
    trick = view["trick"]
    if trick:
        for entry in trick:
            p.card(*spots[entry["seat"]], entry["card"])
    elif view["last_trick"]:
        last = view["last_trick"]
        for entry in last["cards"]:
            p.card(*spots[entry["seat"]], entry["card"], highlight=entry["seat"] == last["winner"])
        lift = f", lifts {last['lifted']}" if last["lifted"] else ""
        p.text((cx - 110, cy + CARD_H + 18), f"last trick: player_{last['winner']}{lift}")
    # the pile of won tricks, face down, and the lifted tricks per team
    px, py = cx + 190, cy - 110
    p.text((px, py - 22), f"pile: {view['pile']} trick(s)")
    for i in range(view["pile"]):
        p.card(px + i * 6, py, None)
    for team in (0, 1):
        ty = cy + 90 + team * 30
        p.text((cx + 190, ty), f"team {team} lifted {lifted[team]}")
        for i in range(lifted[team]):
            p.draw.rectangle([cx + 320 + i * 9, ty, cx + 326 + i * 9, ty + 18], fill=CARD_BACK, outline=WHITE)
    if view["last_round"] and not trick:
        last = view["last_round"]
        p.text((24, 120), f"last round: lifted {last['lifted'][0]} : {last['lifted'][1]}")
        p.text((24, 140), f"team {last['winner_team']} +{last['points']} point(s)")
    if view["result"]:
        p.text((cx - 160, cy - 150), view["result"], fill=GOLD, big=True)
    else:
        p.text((24, height - 30), f"phase: {view['phase']}")
    return p.array()


def draw_rang(view: dict[str, Any]) -> np.ndarray:
    seats = view["seats"]
    width, row_h = 960, 86
    height = 140 + row_h * len(seats)
    p = _Painter(width, height)
    p.text((16, 10), view["title"], big=True)
    p.text((16, 44), f"phase: {view['phase']}")
    p.text((16, 64), view["result"] or "", fill=GOLD)
    p.text((420, 14), "top card")
    p.card(420, 34, view["top"], highlight=True)
    p.text((540, 14), f"stock: {view['stock']}")
    for i in range(min(view["stock"], 12)):
        p.card(540 + i * 3, 34, None)
    p.text((680, 14), f"discard pile: {view['discard']}")
    for i in range(min(view["discard"], 12)):
        p.card(680 + i * 3, 34, None)
    y = 120
    for seat in seats:
        marks = (" dealer" if seat["dealer"] else "") + (" - went out, awaits the answer" if seat["went_out"] else "")
        label = f"{seat['name']}  total {seat['total']}{marks}"
        if not seat["alive"]:
            label += "  (out of the game)"
        p.text((16, y), label, fill=GOLD if seat["to_act"] else WHITE)
        codes = seat["cards"] if seat["cards"] is not None else [None] * seat["count"]
        step = min(CARD_W + 4, (width - 32 - CARD_W) / max(len(codes) - 1, 1))
        if seat["alive"]:
            p.row(16, y + 20, codes, step)
        y += row_h
    return p.array()


def draw_view(view: dict[str, Any]) -> np.ndarray:
    """Paint a table view (from :func:`ring_rang_view` / :func:`rang_view`) as an ``HxWx3`` ``uint8`` array."""
    if view.get("game") not in GAMES:
        raise ValueError(f"view['game'] must be one of {sorted(GAMES)}, got {view.get('game')!r}")
    return GAMES[view["game"]].part("painter")(view)


def render_rgb(env: Any, observer: int | None = None) -> np.ndarray:
    """The table of an env as an image (what ``render()`` returns for ``render_mode="rgb_array"``)."""
    return draw_view(env_view(env, observer))


def save_png(image: np.ndarray, path: str) -> None:
    Image, _, _ = _pillow()
    Image.fromarray(image).save(path)


# ---------------------------------------------------------------------- HTML
# The table drawing shared by the replay page and the `cardenvs serve` page: CSS, and JS functions
# card(code, win), hand(seat), ringRang(view), rang(view) that return the HTML of a view (and esc, SUITS).
TABLE_CSS = """body{margin:0;background:#123;color:#eee;font-family:sans-serif}
#bar{padding:8px 12px;background:#0b1a26;display:flex;gap:10px;align-items:center}
#bar input[type=range]{flex:1}
#caption{padding:6px 12px;min-height:1.4em;color:#fd6}
#table{margin:8px;background:#1c603a;border-radius:14px;padding:8px}
.card{display:inline-block;width:34px;height:48px;margin-right:-10px;border-radius:5px;background:#fcfcf6;
 color:#141414;border:1px solid #555;font-weight:bold;font-size:15px;text-align:center;line-height:22px;
 vertical-align:top;box-shadow:1px 1px 2px #0006}
.card.red{color:#c41824}.card.back{background:#2c4496;border:2px solid #eee}.card.win{border:3px solid #fd6}
.rr{display:grid;grid-template-columns:minmax(150px,1fr) minmax(250px,2fr) minmax(150px,1fr);
 grid-template-areas:". north ." "west mid east" ". south .";gap:2px;align-items:center}
.seat{text-align:center}.seat .name{font-size:13px;margin:1px}.seat.act .name{color:#fd6;font-weight:bold}
.p0{grid-area:south}.p1{grid-area:west}.p2{grid-area:north}.p3{grid-area:east}
.p1 .card.back,.p3 .card.back{margin-right:-26px}.p1 .hand,.p3 .hand{padding-right:26px}
.p1 .card:not(.back),.p3 .card:not(.back){margin:0 -12px 2px 0}.p1 .hand,.p3 .hand{max-width:180px;margin:auto}
.mid{grid-area:mid;text-align:center}
.trick{display:grid;grid-template-columns:repeat(3,64px);grid-template-rows:repeat(3,58px);
 justify-content:center;margin:6px auto}
.trick .t{font-size:10px;text-align:center;line-height:1.1}.trick .t .card{margin:0}
.t0{grid-column:2;grid-row:3}.t1{grid-column:1;grid-row:2}.t2{grid-column:2;grid-row:1}.t3{grid-column:3;grid-row:2}
.trick.last{opacity:.75}.note{font-size:13px;color:#cde}
.sym{font-size:22px;background:#fcfcf6;color:#141414;border-radius:4px;padding:0 4px}.sym.red{color:#c41824}
#info{font-size:14px;line-height:1.5}.result{color:#fd6;font-size:20px}
.rang table{border-collapse:collapse;width:100%;margin-top:8px}
.rang th{font-size:12px;color:#cde;text-align:left;font-weight:normal;padding:2px 6px}
.rang td{padding:1px 6px;border-top:1px solid #ffffff22;font-size:14px}.rang td.num{text-align:right}
.rang td .card{width:30px;height:40px;line-height:18px;font-size:14px}
.rang tr.act td{color:#fd6;font-weight:bold}.rang tr.out td{opacity:.45}
"""

TABLE_JS = """const SUITS = {C:'\\u2663', D:'\\u2666', H:'\\u2665', S:'\\u2660'};
function esc(t){return String(t).replace(/[&<>]/g, c => ({'&':'&amp;','<':'&lt;','>':'&gt;'}[c]));}
function card(code, win){
  if (code === null) return '<span class="card back"></span>';
  if (code === 'JK') return '<span class="card red' + (win ? ' win' : '') + '">JK<br>&#9733;</span>';
  const rank = code.slice(0, -1) === 'T' ? '10' : code.slice(0, -1), suit = code.slice(-1);
  const red = suit === 'D' || suit === 'H';
  const kind = (red ? ' red' : '') + (win ? ' win' : '');
  return '<span class="card' + kind + '">' + rank + '<br>' + SUITS[suit] + '</span>';
}
function hand(seat){
  const codes = seat.cards === null ? Array(seat.count).fill(null) : seat.cards;
  return codes.map(c => card(c)).join('');
}
function trickHtml(entries, bottom, winner, last){
  // each card lies in front of its player: bottom (South), left (West), top (North), right (East)
  return '<div class="trick' + (last ? ' last' : '') + '">' + entries.map(e =>
    '<div class="t t' + ((e.seat - bottom + 4) % 4) + '">' + card(e.card, e.seat === winner) + '<br>player_' +
    e.seat + '</div>').join('') + '</div>';
}
function ringRang(v){
  const where = ['South', 'West', 'North', 'East'], bottom = v.bottom || 0;
  let html = '<div class="rr">';
  v.seats.forEach((s, i) => {
    const pos = (i - bottom + 4) % 4;
    let name = where[pos] + ': ' + s.name + ' (team ' + s.team + ')' + (s.role ? ' ' + s.role : '');
    if (s.knocks.length) name += ' knocked ' + s.knocks.join(' ');
    html += '<div class="seat s' + i + ' p' + pos + (s.to_act ? ' act' : '') + '">' +
      '<div class="name">' + esc(name) + '</div><div class="hand">' + hand(s) + '</div></div>';
  });
  let middle = '';
  if (v.trick.length) middle = trickHtml(v.trick, bottom, -1, false);
  else if (v.last_trick) middle = trickHtml(v.last_trick.cards, bottom, v.last_trick.winner, true) +
      '<div class="note">last trick won by player_' + v.last_trick.winner +
      (v.last_trick.lifted ? ', who lifts ' + v.last_trick.lifted : '') + '</div>';
  const red = v.trump === 'D' || v.trump === 'H';
  const trump = v.trump ? '<span class="sym' + (red ? ' red' : '') + '">' + SUITS[v.trump] + '</span>' : '-';
  let info = '<div id="info"><b>' + esc(v.title) + '</b> &middot; ' + esc(v.phase) + '<br>trump ' + trump +
    ' &middot; tricks ' + v.tricks_played + '/13 &middot; pile ' + v.pile + ' &middot; lifted ' + v.lifted[0] +
    ' : ' + v.lifted[1] + ' &middot; score ' + v.scores[0] + ' : ' + v.scores[1] + '</div>';
  if (v.last_round) info += '<div class="note">last round: lifted ' + v.last_round.lifted.join(' : ') +
    ', team ' + v.last_round.winner_team + ' +' + v.last_round.points + '</div>';
  if (v.result) info += '<div class="result">' + esc(v.result) + '</div>';
  return html + '<div class="mid">' + info + middle + '</div></div>';
}
function rang(v){
  let html = '<div class="rang"><div id="info"><b>' + esc(v.title) + '</b> &middot; ' + esc(v.phase) +
    '<br>top card ' + card(v.top, true) + ' &nbsp; stock ' + v.stock + ' &middot; discard pile ' + v.discard;
  if (v.result) html += '<div class="result">' + esc(v.result) + '</div>';
  html += '</div><table><tr><th>player</th><th>total</th><th>this deal</th><th>cards</th><th></th></tr>';
  v.seats.forEach(s => {
    const note = (s.dealer ? 'dealer ' : '') + (s.went_out ? 'went out' : '') + (s.alive ? '' : 'out of the game');
    html += '<tr class="row' + (s.to_act ? ' act' : '') + (s.alive ? '' : ' out') + '"><td>' + esc(s.name) +
      '</td><td class="num">' + s.total + '</td><td class="num">' + (s.points === null ? '' : s.points) +
      '</td><td>' + (s.alive ? hand(s) : '') + '</td><td>' + esc(note) + '</td></tr>';
  });
  return html + '</table></div>';
}
"""

_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
__CSS__</style></head><body>
<div id="bar"><button id="prev" title="previous (left arrow)">&#9664; prev</button>
<button id="next" title="next (right arrow)">next &#9654;</button>
<input id="slider" type="range" min="0" value="0"><span id="counter"></span></div>
<div id="caption"></div><div id="table"></div>
<script id="frames" type="application/json">__FRAMES__</script>
<script>
const frames = JSON.parse(document.getElementById('frames').textContent);
const slider = document.getElementById('slider');
slider.max = frames.length - 1;
let step = 0;
__TABLE_JS__function show(i){
  step = Math.max(0, Math.min(frames.length - 1, i));
  const f = frames[step];
  slider.value = step;
  document.getElementById('counter').textContent = 'step ' + step + ' / ' + (frames.length - 1);
  document.getElementById('caption').textContent = f.caption;
  document.getElementById('table').innerHTML = f.view.game === 'rang' ? rang(f.view) : ringRang(f.view);
}
document.getElementById('prev').onclick = () => show(step - 1);
document.getElementById('next').onclick = () => show(step + 1);
slider.oninput = () => show(Number(slider.value));
document.addEventListener('keydown', e => {
  if (e.key === 'ArrowLeft') show(step - 1);
  if (e.key === 'ArrowRight') show(step + 1);
});
show(Number(new URLSearchParams(location.search).get('step') || 0));
</script></body></html>
"""


def html_page(frames: list[dict[str, Any]], title: str = "cardenvs replay") -> str:
    """A self-contained HTML page stepping through ``frames`` (each ``{"caption": str, "view": view}``).

    No external resources: the frames are embedded as JSON and drawn with HTML/CSS.
    The page opens at step 0, or at ``?step=N``.
    """
    data = json.dumps(frames, separators=(",", ":")).replace("</", "<\\/")
    safe_title = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    page = _HTML.replace("__CSS__", TABLE_CSS).replace("__TABLE_JS__", TABLE_JS)
    return page.replace("__TITLE__", safe_title).replace("__FRAMES__", data)
