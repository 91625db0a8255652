"""The agent's mind: the traced AgentSpeak interpreter, the internal actions (the one
bridge between plans and the learner), BDI message bodies and the policy cache's beliefs.
"""
