# Cython declarations for the compiled build only (see bdi_rl/bdi/runtime/terms.pxd and
# bdi_rl/bdi/seat.pxd). ``update`` is not declared: a learner may be given its own in its
# ``__dict__`` (over the method).

cdef class QLearner:
    cdef dict __dict__
    cdef public object _epsilon_set, _next_eval_u, _next_u, _rows, _rows_of, alpha, config, env_steps
    cdef public object episodes, epsilon, n_actions, n_states, q, seed
