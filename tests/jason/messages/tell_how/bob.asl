+!hello(N) : N > 5 <- .print("big hello").
