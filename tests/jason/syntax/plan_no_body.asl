// plans without a body or a context
!start.
+!start <- !g; !h; .print(done); .stopMAS.
+!g.
+!h : true.
