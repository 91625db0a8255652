@l(1) +!start <- .print(x).
!start.
