// strong negation ~b is a belief of its own
~raining.
!start.
+!start <- if (~raining) { .print("not raining") };
   if (raining) { .print("raining") } else { .print("no belief raining") };
   +raining; -~raining;
   if (raining & not ~raining) { .print("now raining") };
   .stopMAS.
