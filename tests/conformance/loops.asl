// while re-tests with the bindings of the loop's start (Jason restores the unifier);
// for iterates every solution; if/else; .findall; .count; .member.
// pyagentspeak: same in any order
// expect: i 0
// expect: i 1
// expect: i 2
// expect: odd 1
// expect: odd 3
// expect: all [1,2,3,4]
// expect: count 4
// expect: has 3
// expect: done 3

n(1).
n(2).
n(3).
n(4).
i(0).

!start.

+!start <-
    while (i(I) & I < 3) { .print("i ", I); -i(I); +i(I + 1) };
    for (n(X) & X mod 2 == 1) { .print("odd ", X) };
    .findall(Y, n(Y), All); .sort(All, Sorted); .print("all ", Sorted); Big = [3, 4];
    .count(n(_), C); .print("count ", C);
    if (.member(3, Big)) { .print("has 3") } else { .print("no 3") };
    ?i(Done); .print("done ", Done).
