// .puts replaces #{Var}; .log prints at level info only
!start.
+!start <- X = f(1); .puts("X is #{X}, Y is #{Y}, #{X+1} stays");
   .puts("into #{X}", S); .print(S);
   .log(info, "logged ", X, " ", Z); .log(fine, "not shown"); .log(other, "another level is info");
   .printf("two%nlines");
   .stopMAS.
