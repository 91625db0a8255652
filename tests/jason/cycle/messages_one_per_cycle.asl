// goals sent to oneself arrive one message per cycle
!start.
+!start <- .my_name(Me); .send(Me, achieve, g(1)); .send(Me, achieve, g(2)); .print(s1); .print(s2); .print(s3); .wait(50); .stopMAS.
+!g(N) <- .print("g ", N, " a"); .print("g ", N, " b").
