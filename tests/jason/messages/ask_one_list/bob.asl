value(1).
value(2).
value(3).
