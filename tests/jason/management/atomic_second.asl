// an atomic plan selected while another intention runs
!a.
!b.
+!a <- .print(a1); .print(a2); .print(a3); .print(a4).
@bp[atomic] +!b <- .print(b1); .print(b2); .print(b3); .wait(20); .stopMAS.
