+never <- .print("?").
