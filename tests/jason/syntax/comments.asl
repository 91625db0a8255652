// line comment
/* block
   comment */
!start. // after a goal
+!start <- /* inside */ .print("a // not a comment"); .print("b /* neither */"); .stopMAS.
