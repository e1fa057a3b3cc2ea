"""Pictures of the table: ``render_mode="rgb_array"`` images (Pillow) and a self-contained HTML replay.

Both drawings start from one *view*: a small JSON-ready dict of what the table
shows, built from the engine state in one place by the game's ``view`` part
(``cardenvs/<game>/view.py``: ``table_view(game, observer)``). :func:`draw_view`
paints a view with Pillow into an ``HxWx3`` ``uint8`` array (the game's
``painter`` part, or :func:`draw_generic`); :func:`html_page` embeds a list of
views (one per step) in an HTML page that draws them with HTML/CSS (the game's
``html`` part, or the generic drawing) and steps through them.

Every view has the keys of the base schema, which the generic drawings read:
``game``, ``title``, ``phase``, ``result`` (None until the end), ``seats`` (each
``name``, ``cards`` (codes, or None when hidden), ``count``, ``to_act``, and an
optional ``note``), and optionally ``center`` (card codes on the table) and
``facts`` (one-line strings).

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

from cardenvs.cards import SUITS
from cardenvs.games import game_spec

__all__ = ["env_view", "draw_view", "draw_generic", "html_page", "card_label", "table_css", "table_js"]

SUIT_SYMBOLS = "\u2663\u2666\u2665\u2660"
_SUIT_LETTERS = str.maketrans(dict(zip(SUIT_SYMBOLS, SUITS, strict=True)))


def card_label(code: str) -> tuple[str, int]:
    """``"TD"`` -> (``"10"``, 1): the rank as printed on a card and the suit index (-1 for the Joker)."""
    if code == "JK":
        return "JK", -1
    rank = code[:-1]
    return ("10" if rank == "T" else rank), SUITS.index(code[-1])


# ---------------------------------------------------------------------- views
def env_view(env: Any, observer: int | None = None) -> dict[str, Any]:
    """The view of a cardenvs env (wrapped or not): its game's ``view`` part."""
    raw = getattr(env, "unwrapped", env)
    if raw.game is None:
        raise RuntimeError("no table to show before reset()")
    return game_spec(raw.metadata["name"]).part("view")(raw.game, observer)


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


class Painter:
    """Pillow drawing of cards and text on one image."""

    def __init__(self, width: int, height: int):
        Image, ImageDraw, ImageFont = _pillow()
        self.image = Image.new("RGB", (width, height), TABLE)
        self.draw = ImageDraw.Draw(self.image)
        self.font = _font(ImageFont, 15)
        self.big = _font(ImageFont, 20)
        self.glyphs = _has_suit_glyphs(Image, ImageDraw, self.font)

    def text(self, xy: tuple[float, float], text: str, fill=WHITE, big: bool = False) -> None:
        """``text`` at ``xy``; a suit symbol the font cannot draw is written as its letter (C, D, H, S)."""
        if not self.glyphs:
            text = text.translate(_SUIT_LETTERS)
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


def draw_generic(view: dict[str, Any]) -> np.ndarray:
    """Paint any view of the base schema: title, phase and result, the facts, the cards on the table, and a
    row per seat (its cards, face down where hidden). The painter of a game that declares none."""
    seats = view["seats"]
    facts = [str(f) for f in view.get("facts") or ()]
    width, row_h = 960, 86
    top = 84 + 20 * len(facts) + (CARD_H + 30 if view.get("center") else 0)
    p = Painter(width, top + row_h * len(seats) + 16)
    p.text((16, 10), str(view["title"]), big=True)
    p.text((16, 40), f"phase: {view['phase']}")
    p.text((300, 40), str(view.get("result") or ""), fill=GOLD)
    y = 64
    for fact in facts:
        p.text((16, y), fact)
        y += 20
    if view.get("center"):
        p.text((16, y), "on the table")
        p.row(16, y + 20, list(view["center"]), CARD_W + 4)
        y += CARD_H + 30
    for seat in seats:
        note = f"  {seat['note']}" if seat.get("note") else ""
        p.text((16, y), f"{seat['name']}  {seat['count']} card(s){note}", fill=GOLD if seat["to_act"] else WHITE)
        codes = seat["cards"] if seat["cards"] is not None else [None] * seat["count"]
        p.row(16, y + 20, codes, min(CARD_W + 4, (width - 32 - CARD_W) / max(len(codes) - 1, 1)))
        y += row_h
    return p.array()


def draw_view(view: dict[str, Any]) -> np.ndarray:
    """Paint a table view (a game's ``table_view``) as an ``HxWx3`` ``uint8`` array."""
    try:
        spec = game_spec(view.get("game"))
    except ValueError as error:
        raise ValueError(f"view['game']: {error}") from None
    return spec.part("painter")(view) if spec.has_part("painter") else draw_generic(view)


def render_rgb(env: Any, observer: int | None = None) -> np.ndarray:
    """The table of an env as an image (what ``render()`` returns for ``render_mode="rgb_array"``)."""
    return draw_view(env_view(env, observer))


def save_png(image: np.ndarray, path: str) -> None:
    Image, _, _ = _pillow()
    Image.fromarray(image).save(path)


# ---------------------------------------------------------------------- HTML
# The table drawing shared by the replay page and the `cardenvs serve` page: CSS, and JS functions
# card(code, win), hand(seat) and tableHtml(view) (the HTML of a view: its game's ``html`` part, else
# genericTable(view)), with esc and SUITS. A game's part is {"css": ..., "js": "function(v){...}"}.
TABLE_CSS = """body{margin:0;background:#123;color:#eee;font-family:sans-serif}
#bar{padding:8px 12px;background:#0b1a26;display:flex;gap:10px;align-items:center}
#bar input[type=range]{flex:1}
#caption{padding:6px 12px;min-height:1.4em;color:#fd6}
#table{margin:8px;background:#1c603a;border-radius:14px;padding:8px}
.card{display:inline-block;width:34px;height:48px;margin-right:-10px;border-radius:5px;background:#fcfcf6;
 color:#141414;border:1px solid #555;font-weight:bold;font-size:15px;text-align:center;line-height:22px;
 vertical-align:top;box-shadow:1px 1px 2px #0006}
.card.red{color:#c41824}.card.back{background:#2c4496;border:2px solid #eee}.card.win{border:3px solid #fd6}
#info{font-size:14px;line-height:1.5}.result{color:#fd6;font-size:20px}
.generic .row{padding:4px 6px;border-top:1px solid #ffffff22}.generic .row.act .name{color:#fd6;font-weight:bold}
.generic .name{font-size:13px;margin-bottom:2px}.generic .center{margin:6px 0}.note{font-size:13px;color:#cde}
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
function genericTable(v){
  let html = '<div class="generic"><div id="info"><b>' + esc(v.title) + '</b> &middot; ' + esc(v.phase);
  (v.facts || []).forEach(f => { html += '<br>' + esc(f); });
  if (v.result) html += '<div class="result">' + esc(v.result) + '</div>';
  html += '</div>';
  if (v.center && v.center.length) html += '<div class="center">' + v.center.map(c => card(c)).join('') + '</div>';
  v.seats.forEach((s, i) => {
    html += '<div class="row' + (s.to_act ? ' act' : '') + '" data-seat="' + i + '"><div class="name">' +
      esc(s.name + ' (' + s.count + ')' + (s.note ? ' ' + s.note : '')) + '</div>' + hand(s) + '</div>';
  });
  return html + '</div>';
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
  document.getElementById('table').innerHTML = tableHtml(f.view);
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
    games = sorted({frame["view"]["game"] for frame in frames})
    page = _HTML.replace("__CSS__", table_css(games)).replace("__TABLE_JS__", table_js(games))
    return page.replace("__TITLE__", safe_title).replace("__FRAMES__", data)


def _html_parts(games: list[str]) -> dict[str, dict[str, str]]:
    parts = {}
    for name in games:
        spec = game_spec(name)
        if spec.has_part("html"):
            parts[spec.name] = spec.part("html")
    return parts


def table_css(games: list[str]) -> str:
    """The page's CSS for the tables of ``games``: the shared rules, then each game's own."""
    return TABLE_CSS + "".join(part.get("css", "") for part in _html_parts(games).values())


def table_js(games: list[str]) -> str:
    """The page's JS for the tables of ``games``: the shared functions and ``tableHtml(view)``, which draws a
    view with its game's ``html`` part or, where the game declares none, with ``genericTable``."""
    drawings = ",\n".join(f"{json.dumps(name)}: {part['js']}" for name, part in _html_parts(games).items())
    return (TABLE_JS + "const GAME_HTML = {\n" + drawings + "\n};\n"
            "function tableHtml(v){ return (GAME_HTML[v.game] || genericTable)(v); }\n")
