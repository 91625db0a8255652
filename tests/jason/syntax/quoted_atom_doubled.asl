!start.
+!start <- .print('it''s'); .stopMAS.
