"""What the RING RANG table shows: the view (:func:`table_view`, a JSON-ready dict built from the engine
state in one place), its Pillow painting (:func:`draw`) and its HTML (:data:`HTML`), the spec's ``view``,
``painter`` and ``html`` parts (see :mod:`cardenvs.render`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from cardenvs.cards import CODES, SUITS
from cardenvs.render import BLACK, CARD_BACK, CARD_FACE, CARD_H, CARD_W, GOLD, RED, WHITE, Painter
from cardenvs.ring_rang.engine import HONOUR_NAMES, PHASE_NAMES, bits_to_cards

SEAT_NAMES = ("South", "West", "North", "East")  # seats 0..3 around the table, clockwise


def seat_label(seat: dict[str, Any], extra: str = "") -> str:
    label = seat["name"]
    if seat.get("role"):
        label += f" ({seat['role']})"
    if seat.get("knocks"):
        label += " knocked " + " ".join(seat["knocks"])
    return label + extra


def _hand_order(cards: list[int]) -> list[int]:
    """Display order of a RING RANG hand: by suit (clubs, diamonds, spades, hearts: colours alternate), high first."""
    suit_order = {0: 0, 1: 1, 3: 2, 2: 3}
    return sorted(cards, key=lambda c: (suit_order[c // 13], -(c % 13)))


def table_view(game: Any, observer: int | None = None) -> dict[str, Any]:
    """What the RING RANG table shows (``game`` is a :class:`~cardenvs.ring_rang.engine.RingRangGame`)."""

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


def draw(view: dict[str, Any]) -> np.ndarray:
    width, height = 960, 720
    p = Painter(width, height)
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
        label = f"{SEAT_NAMES[index]}: " + seat_label(seat, f"  team {seat['team']}")
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


HTML = {
    "css": """.rr{display:grid;grid-template-columns:minmax(150px,1fr) minmax(250px,2fr) minmax(150px,1fr);
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
""",
    "js": """function(v){
  function trickHtml(entries, bottom, winner, last){
    // each card lies in front of its player: bottom (South), left (West), top (North), right (East)
    return '<div class="trick' + (last ? ' last' : '') + '">' + entries.map(e =>
      '<div class="t t' + ((e.seat - bottom + 4) % 4) + '">' + card(e.card, e.seat === winner) + '<br>player_' +
      e.seat + '</div>').join('') + '</div>';
  }

  const where = ['South', 'West', 'North', 'East'], bottom = v.bottom || 0;
  let html = '<div class="rr">';
  v.seats.forEach((s, i) => {
    const pos = (i - bottom + 4) % 4;
    let name = where[pos] + ': ' + s.name + ' (team ' + s.team + ')' + (s.role ? ' ' + s.role : '');
    if (s.knocks.length) name += ' knocked ' + s.knocks.join(' ');
    html += '<div class="seat s' + i + ' p' + pos + (s.to_act ? ' act' : '') + '" data-seat="' + i + '">' +
      '<div class="name">' + esc(name) + '</div><div class="hand">' + hand(s) + '</div></div>';
  });
  let middle = '';
  if (v.trick.length) middle = trickHtml(v.trick, bottom, -1, false);
  else if (v.last_trick) middle = trickHtml(v.last_trick.cards, bottom, v.last_trick.winner, true) +
      '<div class="note">last trick won by player_' + v.last_trick.winner +
      (v.last_trick.lifted ? ', who lifts ' + v.last_trick.lifted : '') + '</div>';
  const red = v.trump === 'D' || v.trump === 'H';
  const trump = v.trump ? 'trump <span class="sym' + (red ? ' red' : '') + '">' + SUITS[v.trump] + '</span>' :
    'trump not chosen yet';
  let info = '<div id="info"><b>' + esc(v.title) + '</b> &middot; ' + esc(v.phase) + '<br>' + trump +
    ' &middot; tricks ' + v.tricks_played + '/13 &middot; pile ' + v.pile + ' &middot; lifted ' + v.lifted[0] +
    ' : ' + v.lifted[1] + ' &middot; score ' + v.scores[0] + ' : ' + v.scores[1] + '</div>';
  if (v.last_round) info += '<div class="note">last round: lifted ' + v.last_round.lifted.join(' : ') +
    ', team ' + v.last_round.winner_team + ' +' + v.last_round.points + '</div>';
  if (v.result) info += '<div class="result">' + esc(v.result) + '</div>';
  return html + '<div class="mid">' + info + middle + '</div></div>';
}""",
}
