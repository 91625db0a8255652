"""bdi-rl: multi-agent BDI experiments (AgentSpeak plans on SPADE) with tabular Q-learning."""

from bdi_rl import compiled

__version__ = "0.1.0"

compiled.install()  # before any runtime module is imported: their compiled builds, if current
