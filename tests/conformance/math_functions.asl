// Jason's arithmetic functions (math.*), in expressions, contexts and arguments. Numbers
// print as Jason prints them (3.0 as 3).
// expect: abs 3 2.5
// expect: max 5 min 1 list max 5 list min -2
// expect: round 2 1 floor 3 ceil 4
// expect: sqrt 3 sum 8 mean 2.5 median 2
// expect: pi 3.14 random ok
// expect: context 4
// expect: std_dev 1
// expect: wrong math.abs(a)

x(-3).
!start.

+!start : x(X) <-
    .print("abs ", math.abs(X), " ", math.abs(-2.5));
    .print("max ", math.max(2, 5), " min ", math.min(1, 3), " list max ", math.max([3, a, "s", 5]),
           " list min ", math.min([0, -2, 7]));
    .print("round ", math.round(1.5), " ", math.round(1.4), " floor ", math.floor(3.9), " ceil ", math.ceil(3.1));
    .print("sqrt ", math.sqrt(9), " sum ", math.sum([3, a, 5]), " mean ", math.mean([1, 2, 3, 4]),
           " median ", math.median([3, 1, 2]));
    R = math.random(10);
    if (R >= 0 & R < 10 & math.random < 1) { Ok = ok } else { Ok = wrong };
    .print("pi ", math.floor(math.pi * 100) / 100, " random ", Ok);
    !pick(math.abs(X) + 1);
    .print("std_dev ", math.std_dev([1, 2, 3]));
    !bad.

+!pick(N) : N > 3 & math.sqrt(N * 4) == 4 <- .print("context ", N).

// a function Jason cannot evaluate stays a term (Jason logs an error, the plan goes on)
+!bad <- Y = math.abs(a); .print("wrong ", Y).
-!bad[error(E)] <- .print("failed ", E).
