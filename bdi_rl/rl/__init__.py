"""Reinforcement learning: the Q-learner, env adapters, Q-table checkpoints, moving goals.

numpy, gymnasium and msgspec only: nothing here knows of SPADE, XMPP or AgentSpeak.
"""
