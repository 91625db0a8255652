// .term2string both ways, .substring enumerating positions, strings as lists of characters
!start.
+!start <- .term2string(f(X, "s", [1, 2]), S); .print(S);
   .term2string(T, "g(A, b)"); .print(T);
   .substring("ab", "xabyab", P); .print(P);
   .findall(P2, .substring("ab", "xabyab", P2), Ps); .print(Ps);
   .length("héllo", L); .print(L);
   .lower_case("HeLLo", Lo); .print(Lo);
   .concat("a", 1, 2.5, f(x), R); .print(R);
   .reverse("abc", Rv); .print(Rv);
   .delete("b", "abcb", D); .print(D);
   .stopMAS.
