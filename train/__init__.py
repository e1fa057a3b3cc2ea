"""Training and evaluation for the cardenvs games, installed as ``cardenvs.train``."""
