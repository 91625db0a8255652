// An atomic plan runs to its end before any other intention takes a turn, even while it
// waits: plain's .wait(1) ends during atomic's .wait(5), yet "plain 2" comes after.
// expect: plain 1
// expect: atomic 1
// expect: atomic 2
// expect: atomic 3
// expect: atomic done
// expect: plain 2

!plain.
!critical.

+!plain <- .print("plain 1"); .wait(1); .print("plain 2").

@critical[atomic]
+!critical <- .print("atomic 1"); .wait(5); .print("atomic 2"); !more; .print("atomic done").
+!more <- .print("atomic 3").
