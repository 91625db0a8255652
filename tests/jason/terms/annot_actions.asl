// .add_annot, .add_nested_source, .remove_source_annot
!start.
+!start <- .add_annot(b(1)[x], y, A); .print(A);
   .add_nested_source(c(2), bob, B); .print(B);
   .add_nested_source([d[source(tom)], 5], ann, C); .print(C);
   .remove_source_annot(e[source(x), k], D); .print(D);
   .stopMAS.
