+?price(gin, P)[source(S)] <- .print("asked by ", S); P = 12.
