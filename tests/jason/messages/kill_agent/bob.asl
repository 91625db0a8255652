!loop.
+!loop <- .wait(10); !loop.
+hello <- .print("? a killed agent got a message").
