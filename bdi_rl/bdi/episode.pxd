# Cython declarations for the compiled build only (see bdi_rl/bdi/runtime/terms.pxd and seat.pxd).

cdef class Percepts:
    cdef dict __dict__
    cdef public object mind

cdef class EpisodeSession:
    cdef dict __dict__
    cdef public object _columns, _episode_open, _eval_env, _goal_index, _length, _reset_seeded, _return, _state
    cdef public object after_episode, env, episodes_target, eval_episodes, eval_every, evaluation, goal_every
    cdef public object goals, last_reward, learner, on_episode, on_transition, options, outcome, percepts, seed
    cdef public object state_facts, stats, tracer
