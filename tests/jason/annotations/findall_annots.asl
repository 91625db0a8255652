// enumerating a belief's annotations
b(1)[source(self), x, y(2)].
!start.
+!start <- .findall(A, b(1)[A], L); .print(L); .stopMAS.
