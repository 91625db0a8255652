// .remove_plan by label
!start.
@hi +!hi <- .print("hi").
+!hi <- .print("second hi").
+!start <- !hi; .remove_plan(hi); !hi; .stopMAS.
