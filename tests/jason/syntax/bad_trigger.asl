!start.
*!start <- .print(a).
