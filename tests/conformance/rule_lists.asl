// A list a rule builds as its answer ([N | L], L bound by the rule's recursion after the head
// matched), read by the list actions and compared: as whole as a list written out.
// Recorded from Jason 3.2.2 (../shared/jason/run-jason rule_lists.asl).
// expect: length 3
// expect: not empty
// expect: nth 2
// expect: sort [1,2,3]
// expect: max 3
// expect: concat [3,2,1,0]
// expect: reverse [1,2,3]
// expect: equal
// expect: a list
// expect: member 3
// expect: delete [3,2]
// expect: difference [2,3]
// expect: union [1,2,3,4]

down(0, []).
down(N, [N | L]) :- N > 0 & down(N - 1, L).
!start.
+!start : down(3, D) <-
    .length(D, N); .print("length ", N);
    if (.empty(D)) { .print("empty") } else { .print("not empty") };
    .nth(1, D, X); .print("nth ", X);
    .sort(D, S); .print("sort ", S);
    .max(D, M); .print("max ", M);
    .concat(D, [0], C); .print("concat ", C);
    .reverse(D, R); .print("reverse ", R);
    if (D == [3, 2, 1]) { .print("equal") } else { .print("not equal") };
    .list(D); .print("a list");
    .member(Y, D); .print("member ", Y);
    .delete(2, D, Del); .print("delete ", Del);
    .difference(D, [1], Dif); .print("difference ", Dif);
    .union(D, [4], U); .print("union ", U).
