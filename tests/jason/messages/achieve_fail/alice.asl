!start.
+!start <- .send(bob, achieve, nowhere); .wait(100); .print("alice goes on"); .stopMAS.
