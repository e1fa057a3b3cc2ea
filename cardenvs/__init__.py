"""cardenvs: PettingZoo AEC environments for card games: RING RANG and Rang, and any game an installed
package adds (docs/adding_a_game.md).

``from cardenvs import ring_rang_v0, rang_v0`` then ``ring_rang_v0.env()``.
Every game of the table (:mod:`cardenvs.games`) is also registered with PettingZoo's registry as
``pettingzoo.make("aec", "cardenvs/<env name>")`` (``"cardenvs/ring_rang_v0"``) and as a gymnasium
single-agent env under its ``gym_id`` (``gymnasium.make("cardenvs/RingRang-v0")``).
"""

from importlib import import_module
from importlib.resources import files
from types import ModuleType

from .games import GAMES

__version__ = "0.1.0"
# the public env names of the built-in games that have one (cardenvs/<env name>.py), from the table
__all__ = [spec.env_name for spec in GAMES.values()
           if spec.builtin and (files(__name__) / f"{spec.env_name}.py").is_file()]


def __getattr__(name: str) -> ModuleType:
    # Lazy, so `import cardenvs` stays cheap and one game's import error cannot break the other.
    if name in __all__:
        return import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'cardenvs' has no attribute {name!r}")


def _register() -> None:
    try:  # gymnasium single-agent envs, by entry-point string; a missing gymnasium must not break the import
        import gymnasium

        for spec in GAMES.values():
            if spec.gym_id not in gymnasium.registry:
                gymnasium.register(id=spec.gym_id, entry_point="cardenvs.gym_envs:make_env",
                                   kwargs={"game": spec.name}, disable_env_checker=False)
    except ImportError:
        pass
    try:
        import pettingzoo
        register = pettingzoo.register
    except (ImportError, AttributeError):  # PettingZoo < 1.27 has no registry
        return
    for spec in GAMES.values():
        if f"cardenvs/{spec.env_name}" not in pettingzoo.aec_registry:
            register("aec", f"cardenvs/{spec.env_name}", entry_point=f"{spec.env_module}:env")


_register()
