# Cython declarations for the compiled build only (see terms.pxd).

cdef class BeliefBase:
    cdef public object groups, order
