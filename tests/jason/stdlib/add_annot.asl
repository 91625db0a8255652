// .add_annot and .remove_source_annot
!start.
+!start <- .add_annot(b(1), a, X); .print(X); .add_annot([c, d(2)], z, L); .print(L); .stopMAS.
