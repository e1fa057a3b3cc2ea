"""The tests' game lists, asked of the games table (never written out by hand): every registered game (the
built-ins and any installed plugin, such as examples/crazy_eights), the built-ins, and those with a batched
engine."""

from cardenvs.games import GAME_NAMES, game_spec

ALL_GAMES = list(GAME_NAMES)
BUILTIN_GAMES = [name for name in GAME_NAMES if game_spec(name).builtin]
VECTOR_GAMES = [name for name in GAME_NAMES if game_spec(name).has_vector_env]
GAUNTLET_GAMES = [name for name in GAME_NAMES if game_spec(name).gauntlet]
PROTOCOL_GAMES = [name for name in GAME_NAMES if game_spec(name).protocols]
