+hello(N)[source(S)] <- .my_name(M); .print(M, " got hello from ", S, " ", N); .stopMAS.
