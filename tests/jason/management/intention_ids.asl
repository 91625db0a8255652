// intention ids count from one
!a.
!b.
+!a <- .wait(100).
+!b <- .current_intention(intention(Id, _)); .print("b is intention ", Id);
   .findall(I, .intention(I, _), L); .print(L); .stopMAS.
