@hp +!hello(N) <- .print("hello ", N).
