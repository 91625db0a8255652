// intentions dropped one after another do not stop the agent
!a.
!b.
!c.
+!a <- .fail.
+!b <- !nowhere.
+!c <- .wait(50); .print("c"); .stopMAS.
