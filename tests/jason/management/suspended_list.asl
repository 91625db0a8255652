// .suspended and .intend of suspended goals
!w(1).
!w(2).
!boss.
+!w(N) <- .wait(1000).
+!boss <- .wait(10); .suspend(w(1)); .findall(G, .suspended(G, _), L); .print(L);
   if (.intend(w(1))) { .print("intends w(1)") };
   .stopMAS.
