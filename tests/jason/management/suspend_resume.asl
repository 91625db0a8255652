// .suspend and .resume an intention
!worker.
!boss.
+!worker <- .print("w1"); .wait(20); .print("w2"); .wait(20); .print("w3").
+!boss <- .wait(10); .suspend(worker); .print("suspended");
   if (.suspended(worker, R)) { .print("worker suspended: ", R) };
   .wait(100); .print("resuming"); .resume(worker); .wait(100); .stopMAS.
