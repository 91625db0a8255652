// .wait(ms) suspends; .wait({+b(X)}) resumes when b(X) is added, with X bound; a timeout
// with a third argument does not fail.
// expect: waiting for ping
// expect: ticker added ping
// expect: got ping 42
// expect: timed out, elapsed ok
// expect: slept

!waiter.
!ticker.
!sleeper.

+!waiter <- .print("waiting for ping"); .wait({+ping(X)}); .print("got ping ", X);
    .wait({+never}, 20, T); if (T >= 15) { .print("timed out, elapsed ok") }.
+!ticker <- .wait(5); .print("ticker added ping"); +ping(42).
+!sleeper <- .wait(80); .print("slept").
