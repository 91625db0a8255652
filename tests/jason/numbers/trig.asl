// trigonometry and e
!start.
+!start <- .print(math.sin(0)); .print(math.cos(0)); .print(math.e); .print(math.atan(1) * 4);
   .print(math.tan(0)); .print(math.asin(1));
   .stopMAS.
