"""cardenvs: PettingZoo AEC environments for Rang and RING RANG.

``from cardenvs import ring_rang_v0, rang_v0`` then ``ring_rang_v0.env()``.
Both are also registered with PettingZoo's registry as
``pettingzoo.make("aec", "cardenvs/ring_rang_v0")`` and ``"cardenvs/rang_v0"``, and as
gymnasium single-agent envs ``gymnasium.make("cardenvs/RingRang-v0")`` and ``"cardenvs/Rang-v0"``.
"""

from importlib import import_module
from types import ModuleType

from .games import GAMES

__version__ = "0.1.0"
__all__ = ["ring_rang_v0", "rang_v0"]

# env module name -> module, and gymnasium id -> entry point, from the per-game table (cardenvs.games);
# cardenvs.gym_envs sits above the agents: only gymnasium.make imports it
_ENV_MODULES = {spec.env_module.rpartition(".")[2]: spec.env_module for spec in GAMES.values()}
GYM_ENV_IDS = {spec.gym_id: f"cardenvs.gym_envs:make_{spec.name}" for spec in GAMES.values()}


def __getattr__(name: str) -> ModuleType:
    # Lazy, so `import cardenvs` stays cheap and one game's import error cannot break the other.
    if name in _ENV_MODULES:
        return import_module(_ENV_MODULES[name])
    raise AttributeError(f"module 'cardenvs' has no attribute {name!r}")


def _register() -> None:
    try:  # gymnasium single-agent envs, by entry-point string; a missing gymnasium must not break the import
        import gymnasium

        for env_id, entry_point in GYM_ENV_IDS.items():
            if env_id not in gymnasium.registry:
                gymnasium.register(id=env_id, entry_point=entry_point, disable_env_checker=False)
    except ImportError:
        pass
    try:
        import pettingzoo
        register = pettingzoo.register
    except (ImportError, AttributeError):  # PettingZoo < 1.27 has no registry
        return
    for env_id, module in _ENV_MODULES.items():
        if f"cardenvs/{env_id}" not in pettingzoo.aec_registry:
            register("aec", f"cardenvs/{env_id}", entry_point=f"{module}:env")


_register()
