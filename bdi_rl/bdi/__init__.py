"""The agent's mind: bdi-rl's AgentSpeak runtime (``runtime/``), the traced mind on it, the
internal actions (the one bridge between plans and the learner), BDI message bodies and the
policy cache's beliefs.
"""
