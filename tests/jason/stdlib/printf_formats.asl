// .printf: Java's String.format, every number a double
!start.
+!start <- .printf("%5s|%-5s|%.2s|%S", ab, "cd", "efgh", x);
   .printf("%.3e|%g|%g|%g", 0.000123456, 123456789.0, 100000, 0);
   .printf("%b %b %b", true, false, 0);
   .printf("%.0f %.0f %.1f %.2f", 0.5, 1.5, 0.25, 2.675);
   .printf("%s %s %s", 1.0E-5, 12345678.9, -0.001);
   .printf("[%10.3f] [%-10.1f] [%(.2f]", 3.14159, 2.0, -5.5);
   .printf("%2$s %1$s", a, b);
   .puts("#{abc} #{12} #{V}");
   .stopMAS.
