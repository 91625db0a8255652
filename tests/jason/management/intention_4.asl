// .intention/3 and /4: ids and states
!a.
!b.
+!a <- .wait(500).
+!b <- .wait(10); .findall(S, .intention(_, S), L); .print(L);
   .intention(I, St, _, current); .print("current state ", St);
   .stopMAS.
