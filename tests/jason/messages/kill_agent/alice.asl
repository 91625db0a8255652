!start.
+!start <- .wait(50); .kill_agent(bob); .wait(50); .all_names(L); .sort(L, M); .print(M);
   !tell_bob;
   if (.kill_agent(nobody)) { .print("?") } else { .print("nobody to kill") };
   .send(carol, achieve, ping); .wait(100); .stopMAS.
+!tell_bob <- .send(bob, tell, hello).
-!tell_bob[error(E)] <- .print("bob is gone: ", E).
+pong[source(S)] <- .print("pong from ", S).
