// A failure plan that fails passes the failure to the next goal down with a handler.
// expect: h1
// expect: h0: ia_failed
// expect: done

!top.

+!top <- !g0; .print("done").
+!g0 <- !g1.
+!g1 <- .fail.
-!g1 <- .print("h1"); .fail.
-!g0[error(E)] <- .print("h0: ", E).
