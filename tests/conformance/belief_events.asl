// +b and -b plans react to belief changes, with the change's annotations.
// expect: added hot[source(self)]
// expect: removed hot
// expect: ignored

!start.
+!start <- +temp(hot); -temp(hot); +other(1); .wait(10); .print("ignored").
+temp(T)[source(S)] <- .print("added ", T, "[source(", S, ")]").
-temp(T) <- .print("removed ", T).
