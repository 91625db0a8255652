// askHow, then tellHow of the answer to a third agent: the plan's source is the teller, untellHow removes it
!start.
+!start <- .wait(100); .send(alice, askHow, {+!hello(_)}, Plans); .length(Plans, N); .print("got ", N);
   .send(carl, tellHow, Plans); .wait(200); .send(carl, achieve, show);
   .wait(200); .send(carl, untellHow, hello); .wait(200); .send(carl, achieve, show); .wait(300); .stopMAS.
