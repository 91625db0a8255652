+!work <- +working(yes); .print("working"); .wait(2000); .print("never").
