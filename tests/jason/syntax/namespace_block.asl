// a namespace block
{ begin namespace(ns) }
b(1).
+!g <- .print("g in ns").
{ end }
!start.
+!start <- ?ns::b(X); .print(X); !ns::g; .stopMAS.
