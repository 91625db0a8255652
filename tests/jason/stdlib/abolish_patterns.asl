// .abolish with partly bound patterns, annotations and a variable bound to a literal
p(1, a). p(2, b). p(3, a). q(1).
!start.
+!start <- .abolish(p(_, a)); .findall(X, p(X, _), L); .print(L);
   +r(1)[source(tom)]; +r(1); +r(2)[source(ann)];
   .abolish(r(_)[source(tom)]); .findall(Y, r(Y), M); .print(M);
   P = q(1); .abolish(P); .count(q(_), N); .print(N);
   .abolish(nothing(_)); .print("nothing to abolish is fine");
   .stopMAS.
