// Without a failure plan the intention is dropped (and reported); the others go on.
// expect: start
// expect: other goes on
// dropped: +!broken ia_failed

!broken.
!other.

+!broken <- .print("start"); .fail; .print("never").
+!other <- .print("other goes on").
