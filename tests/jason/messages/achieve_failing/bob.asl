+!job(N)[source(A)] <- if (N == 1) { .fail }; .send(A, tell, result(N, ok)).
-!job(N)[source(A), error(E)] <- .print("job ", N, " failed: ", E); .send(A, tell, result(N, failed)).
