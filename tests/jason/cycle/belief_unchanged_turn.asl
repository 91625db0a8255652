// adding a belief already there, or removing one that is not, raises no event: the deed is just a deed
x.
!a.
!b.
+!a <- .print(a1); +x; .print(a2); -y; .print(a3).
+x <- .print("x reaction").
-y <- .print("y reaction").
+!b <- .print(b1); .print(b2); .print(b3); .print(b4); .wait(20); .stopMAS.
