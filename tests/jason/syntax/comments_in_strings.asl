// comment
/* block
 comment */ !start. +!start <- .print("a//b /* c */"); .stopMAS.
