// .drop_all_desires drops the other intentions and pending goal events, not the current one
!a.
!b.
+!a <- .wait(1000); .print("never a").
+!b <- .wait(50); !!later; .drop_all_desires; .print("b goes on"); .wait(50);
   .findall(G, .desire(G), L); .print(L); .stopMAS.
+!later <- .print("later ran").
