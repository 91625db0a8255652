!start.
+!start <- .send(bob, achieve, job(1)); .wait(200); .send(bob, achieve, job(2)).
+result(N, R)[source(bob)] <- .print("job ", N, ": ", R); if (N == 2) { .stopMAS }.
