"""The shipped trained policies (``*.npz``, loaded data-only by :mod:`cardenvs.agents.policy`)."""
