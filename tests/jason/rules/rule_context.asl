// a rule in a plan context selects the plan
age(ann, 30). age(bob, 12).
adult(P) :- age(P, A) & A >= 18.
!greet(ann).
!greet(bob).
+!greet(P) : adult(P) <- .print("hello ", P).
+!greet(P) <- .print("hi ", P); !finish.
+!finish <- .stopMAS.
