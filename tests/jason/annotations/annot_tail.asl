// the tail of an annotation list
!start.
+!start <- +b[c, a, b]; ?b[a|T]; .print(T); ?b[X|Y]; .print(X, " ", Y); .stopMAS.
