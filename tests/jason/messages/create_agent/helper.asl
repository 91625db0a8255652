+!hello(Who) <- .my_name(Me); .print(Me, " says hello to ", Who); .send(Who, tell, hi(1)).
