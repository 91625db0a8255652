+!show <- .relevant_plans({+!hello(_)}, _, L); .print(L).
