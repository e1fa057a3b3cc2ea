"""The public, versioned name of the ring_rang env (PettingZoo's ``<game>_v<N>`` convention): ``from cardenvs import
ring_rang_v0`` then ``ring_rang_v0.env()``. The env lives in its game's folder, :mod:`cardenvs.ring_rang.env`, whose
docstring is its docs page; this name is that very module."""

import sys

from cardenvs.ring_rang import env as _env

sys.modules[__name__] = _env
