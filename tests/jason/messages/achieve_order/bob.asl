+!say(N) <- .print("say ", N).
