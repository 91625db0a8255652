# Cython declarations for the compiled build only (the source runs as written): the term
# types as extension types, so their own methods read and write fields as C struct members
# (BENCHMARKS.md, "Where the compiled runtime's instructions go"). Every field stays public,
# so Python code (and the sources' tests) sees the same attributes.

cdef class LVar:
    cdef public object ref, name

cdef class PartialList:
    cdef public object items, tail

cdef class Struct:
    cdef public object functor, args, annots, _hash
