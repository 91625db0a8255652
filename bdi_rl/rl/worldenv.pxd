# Cython declarations for the compiled build only (see bdi_rl/bdi/runtime/terms.pxd and
# bdi_rl/bdi/seat.pxd).

cdef class World:
    cdef dict __dict__
    cdef public object _eval_env, agents, bound, env, env_id, family, kwargs, max_episode_steps, optimum
    cdef public object seats, steps
