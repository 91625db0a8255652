# Cython declarations for the compiled build only (see bdi_rl/bdi/runtime/terms.pxd and
# bdi_rl/bdi/seat.pxd).

cdef class StepRecord:
    cdef dict __dict__
    cdef public object _next_keyframe, a, at, cycles, def0, def_bytes, defs, done, eps_rows, epsilon, ids
    cdef public object keyframe, ops, q, q_after, q_before, r, refs, s, s2, since_keyframe
