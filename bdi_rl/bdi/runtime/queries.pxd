# Cython declarations for the compiled build only (see terms.pxd).

cdef class CompiledRule:
    cdef public object head, body, size, file, line, annots, _body_then
