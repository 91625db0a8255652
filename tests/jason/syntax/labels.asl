// plan labels with annotations
!start.
@l1 +!start <- !g; .stopMAS.
@l2[atomic, prio(2)] +!g <- .print(g).
