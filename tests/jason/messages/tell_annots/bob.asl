+!show <- .findall(A, b(1)[A], L); .print(L); .stopMAS.
