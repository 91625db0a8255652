# Cython declarations for the compiled build only (see bdi_rl/bdi/runtime/terms.pxd and
# bdi_rl/bdi/seat.pxd).

cdef class Tracer:
    cdef dict __dict__
    cdef public object _spill, _spill_read, acked, agent, closed, episode, held, level, memory_events
    cdef public object on_ack, on_emit, pending, record, run, seq, spilled, step
