# Cython declarations for the compiled build only (see bdi_rl/bdi/runtime/terms.pxd): the
# seat as an extension type, its fields C struct members in its own methods; ``__dict__``
# keeps any other attribute Python code gives it.

cdef class SeatClient:
    cdef dict __dict__
    cdef public object _ahead, _completed, _defaulted, _early, _held, _in_call, _refused, _resume, _row
    cdef public object _told_finished, _waiting, eval_every, facts, lost, port, seat, session, wake
