// .foreach-free: .findall over .member with a test inside
!start.
+!start <- .findall(X * 2, .member(X, [1, 2, 3]) & X \== 2, L); .print(L); .stopMAS.
