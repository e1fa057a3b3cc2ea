"""What the Rang table shows: the view (:func:`table_view`, a JSON-ready dict built from the engine state
in one place), its Pillow painting (:func:`draw`) and its HTML (:data:`HTML`), the spec's ``view``,
``painter`` and ``html`` parts (see :mod:`cardenvs.render`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from cardenvs.cards import CODES
from cardenvs.rang.engine import PHASE_NAMES
from cardenvs.render import CARD_W, GOLD, WHITE, Painter


def table_view(game: Any, observer: int | None = None) -> dict[str, Any]:
    """What the Rang table shows (``game`` is a :class:`~cardenvs.rang.engine.RangGame`)."""

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


def draw(view: dict[str, Any]) -> np.ndarray:
    seats = view["seats"]
    width, row_h = 960, 86
    height = 140 + row_h * len(seats)
    p = Painter(width, height)
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


HTML = {
    "css": """.rang table{border-collapse:collapse;width:100%;margin-top:8px}
.rang th{font-size:12px;color:#cde;text-align:left;font-weight:normal;padding:2px 6px}
.rang td{padding:1px 6px;border-top:1px solid #ffffff22;font-size:14px}.rang td.num{text-align:right}
.rang td .card{width:30px;height:40px;line-height:18px;font-size:14px}
.rang tr.act td{color:#fd6;font-weight:bold}.rang tr.out td{opacity:.45}
""",
    "js": """function(v){
  let html = '<div class="rang"><div id="info"><b>' + esc(v.title) + '</b> &middot; ' + esc(v.phase) +
    '<br>top card ' + card(v.top, true) + ' &nbsp; stock ' + v.stock + ' &middot; discard pile ' + v.discard;
  if (v.result) html += '<div class="result">' + esc(v.result) + '</div>';
  html += '</div><table><tr><th>player</th><th>total</th><th>this deal</th><th>cards</th><th></th></tr>';
  v.seats.forEach((s, i) => {
    const note = (s.dealer ? 'dealer ' : '') + (s.went_out ? 'went out' : '') + (s.alive ? '' : 'out of the game');
    html += '<tr class="row' + (s.to_act ? ' act' : '') + (s.alive ? '' : ' out') + '" data-seat="' + i + '"><td>' +
      esc(s.name) + '</td><td class="num">' + s.total + '</td><td class="num">' + (s.points === null ? '' : s.points) +
      '</td><td>' + (s.alive ? hand(s) : '') + '</td><td>' + esc(note) + '</td></tr>';
  });
  return html + '</table></div>';
}""",
}
