+!other <- true.
