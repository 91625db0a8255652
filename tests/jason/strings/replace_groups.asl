// .replace with groups and character classes (no backslashes)
!start.
+!start <- .replace("john smith", "([a-z]+) ([a-z]+)", "$2, $1", B); .print(B);
   .replace("a.b.c", "[.]", "-", C); .print(C);
   .replace("aaa", "a*", "<$0>", D); .print(D);
   .replace("x=1, y=22", "([a-z])=([0-9]+)", "$1:$2", E); .print(E);
   .stopMAS.
