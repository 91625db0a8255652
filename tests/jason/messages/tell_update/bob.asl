+temp(T)[source(S)] <- .print("temp ", T, " from ", S).
-temp(T) <- .print("temp ", T, " gone").
+!show <- .findall(T, temp(T), L); .print(L); .stopMAS.
