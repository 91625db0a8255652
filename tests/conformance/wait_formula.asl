// .wait(Formula): goes on at once when the agent believes it, else suspends until a belief
// change makes it true, with the formula's bindings; a timeout fails the plan with
// wait_timeout (Jason's kind), unless a third argument takes the elapsed time.
// expect: already 1
// expect: counting
// expect: reached 3
// expect: counter done
// expect: timeout wait_timeout
// expect: gave up, elapsed ok

count(0).
flag(1).

!watch.
!counter.
!impatient.
!patient.

+!watch <-
    .wait(flag(F)); .print("already ", F);
    .wait(count(N) & N >= 3); .print("reached ", N).

+!counter <- .print("counting"); .wait(5);
    while (count(C) & C < 5) { -count(C); +count(C + 1) };
    .wait(5); .print("counter done").

+!impatient <- .wait(never(_), 20).
-!impatient[error(E)] <- .print("timeout ", E).

+!patient <- .wait(never(_) | count(100), 40, T); if (T >= 35) { .print("gave up, elapsed ok") }.
