// Body operators: +b, -b, -+b, ?q, !!g, if/elif/else, while, for, and the standard actions.
// expect: n 3
// expect: elif
// expect: loop 1
// expect: loop 2
// expect: loop 3
// expect: for a
// expect: for b
// expect: all [[a,1],[b,2]]
// expect: count 2 length 3 strlen 5
// expect: member ok
// expect: concat [1,2,3] abc
// expect: max 9 min 1
// expect: name body_ops
// expect: tested 2
// expect: new intention
// belief: counter(2)[source(self)]
// belief: item(b,2)[source(self)]
// absent: item(a,1)
// absent: counter(0)
// absent: value(7)
// belief: value(1)[source(self)]

counter(0).
value(7).
item(a, 1).
item(b, 2).

!start.

+!start <-
    N = 3;
    .print("n ", N);
    if (N < 2) { .print("if") } elif (N == 3) { .print("elif") } else { .print("else") };
    while (counter(C) & C < 3) { -+counter(C + 1); .print("loop ", C + 1) };
    -+value(1);
    -+counter(2);
    for (item(K, _)) { .print("for ", K) };
    .findall([K2, V], item(K2, V) & V > 0, L);
    .print("all ", L);
    .count(item(_, _), Cn); .length([x, y, z], Len); .length("hello", SL);
    .print("count ", Cn, " length ", Len, " strlen ", SL);
    if (.member(b, [a, b, c])) { .print("member ok") };
    .concat([1], [2, 3], LL); .concat("a", "b", "c", S);
    .print("concat ", LL, " ", S);
    .max([3, 9, 1], Mx); .min([3, 9, 1], Mn);
    .print("max ", Mx, " min ", Mn);
    .my_name(Me); .print("name ", Me);
    ?item(b, V2); .print("tested ", V2);
    -item(a, 1);
    !!other.

+!other <- .print("new intention").
