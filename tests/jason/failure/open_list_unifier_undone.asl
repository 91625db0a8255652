// a failed plan's bindings are undone inside an open list too ([a|T] posted, T bound, failure)
!start.
+!start <- !g([a|T]); .print(T); !h([a|U]);
   if (.ground(U)) { .print("U bound ", U) } else { .print("U unbound") }.
+!g([a|X]) <- X = [b].
+!h([a|Y]) <- Y = [c]; .fail.
-!h([a|R]) <- if (.ground(R)) { .print("h failed, rest bound") } else { .print("h failed, rest unbound") }.
