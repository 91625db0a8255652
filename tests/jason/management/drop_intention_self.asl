// an intention dropping itself
!start.
!other.
+!start <- .print("before"); .drop_intention(start); .print("never").
+!other <- .wait(50); .print("other"); .stopMAS.
