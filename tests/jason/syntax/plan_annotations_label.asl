// a plan label with annotations, printed
!start.
@go[prio(1), note("x")] +!start <- .relevant_plans({+!start}, _, L); .print(L); .stopMAS.
