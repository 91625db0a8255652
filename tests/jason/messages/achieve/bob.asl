+!greet(T)[source(S)] <- .print("greeted by ", S, ": ", T); .send(S, achieve, reply(ok)).
