"""Crazy Eights for cardenvs: an example game shipped as a plugin package (entry point group ``cardenvs.games``).

``from cardenvs_crazy_eights import env`` then ``env.env(num_players=4)``; the rules are in
:mod:`cardenvs_crazy_eights.env`. cardenvs imports the env, agents and apps parts when it needs them
(see :mod:`cardenvs_crazy_eights.spec`).
"""

__version__ = "0.1.0"
