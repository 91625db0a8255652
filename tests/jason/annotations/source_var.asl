// which source(S) binds first when a belief has several
!start.
+!start <- +b[source(zed)]; +b[source(amy)]; +b[source(mel)];
   ?b[source(S)]; .print(S);
   .findall(T, b[source(T)], L); .print(L);
   .stopMAS.
