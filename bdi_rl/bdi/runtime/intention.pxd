# Cython declarations for the compiled build only (see terms.pxd).

cdef class Frame:
    cdef public object plan, code, env, pc, unwind_to, ttype, event, saved, renamed, free, step

cdef class Intention:
    cdef public object stack, atomic, id, dropped, reply, suspended, reason, key, since
