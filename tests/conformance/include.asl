// { include("file") } is read relative to the including file.
// expect: helped 7
{ include("lib/helpers.asl") }
!start.
+!start : helper_fact(X) <- !help(X).
