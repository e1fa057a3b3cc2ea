"""Agents for the cardenvs games, installed as ``cardenvs.agents``."""
