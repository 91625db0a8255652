"""bdi-rl: multi-agent BDI experiments (AgentSpeak plans on SPADE) with tabular Q-learning."""

__version__ = "0.1.0"
