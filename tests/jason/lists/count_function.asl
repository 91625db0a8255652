// .count(F) as an arithmetic function: in a context, in arithmetic, as an argument
b(1). b(2). b(3).
!start.
+!start : .count(b(_)) > 2 <- N = .count(b(_)) + 1; .print(N); if (.count(b(X)) == 3) { .print(three) };
   .print(.count(b(_))); M = .count(b(Y) & Y > 1) * 10; .print(M); .stopMAS.
