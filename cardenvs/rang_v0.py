"""The public, versioned name of the rang env (PettingZoo's ``<game>_v<N>`` convention): ``from cardenvs import
rang_v0`` then ``rang_v0.env()``. The env lives in its game's folder, :mod:`cardenvs.rang.env`, whose
docstring is its docs page; this name is that very module."""

import sys

from cardenvs.rang import env as _env

sys.modules[__name__] = _env
