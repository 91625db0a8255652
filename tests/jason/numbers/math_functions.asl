// math functions
!start.
+!start <- .print(math.sqrt(16)); .print(math.sqrt(2)); .print(math.abs(-3)); .print(math.abs(-2.5));
   .print(math.max(3, 8)); .print(math.min(3, 8)); .print(math.round(2.5)); .print(math.round(-2.5));
   .print(math.floor(2.7)); .print(math.ceil(2.1)); .print(math.log(1)); .print(math.pi);
   .stopMAS.
