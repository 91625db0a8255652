"""Reinforcement learning: the Q-learner, env adapters, Q-table checkpoints, moving goals, and
for shared worlds the cooperative matrix games and level-based foraging (PettingZoo
ParallelEnvs) and the learners of agents acting in one world (independent and hysteretic
Q-learning).

numpy, gymnasium, pettingzoo, lbforaging (imported when a foraging world is built) and msgspec
only: nothing here knows of SPADE, XMPP or AgentSpeak.
"""
