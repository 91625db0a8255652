@hello +!hello(N) <- .print("hello ", N).
