// rounding functions give what Java gives
!start.
+!start <- .print(math.round(3.7)); .print(math.floor(-1.5)); .print(math.ceil(-1.5));
   .print(math.round(0.49999)); .print(math.sqrt(0.25)); .print(math.abs(-0));
   .stopMAS.
