// an atomic plan that posts a sub-goal: its event is selected before every other
!a.
!b.
@at[atomic] +!a <- .print(a1); !sub; .print(a2).
+!sub <- .print(s1); .print(s2).
+!b <- .print(b1); .print(b2); .print(b3); .wait(20); .stopMAS.
