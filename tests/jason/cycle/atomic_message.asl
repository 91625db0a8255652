// messages wait while an atomic plan runs; the goal they carry runs after it
!a.
@at[atomic] +!a <- .my_name(Me); .send(Me, achieve, m); .print(a1); .print(a2); .print(a3).
+!m <- .print(m1); .wait(20); .stopMAS.
