// math.mean, math.median, math.sum and math.std_dev over floats, mixed lists, even counts and a sum that loses a
// digit: Jason adds the numbers in order as doubles (no compensated sum), so the mean of
// [0.1, 0.2, 0.3] is 0.20000000000000004 and that of [1e16, 1, -1e16] is 0.
// Recorded from Jason 3.2.2 (../shared/jason/run-jason mean_median.asl).
// expect: mean floats 0.20000000000000004
// expect: mean ints 1.5 one 7
// expect: mean mixed 2.5
// expect: mean big 0
// expect: median even 2.5 odd floats 1.5
// expect: median negative -2.5
// expect: sum 9
// expect: sum big 0 floats 0.6000000000000001
// expect: std_dev floats 0.09999999999999999

!start.

+!start <-
    .print("mean floats ", math.mean([0.1, 0.2, 0.3]));
    .print("mean ints ", math.mean([1, 2]), " one ", math.mean([7]));
    .print("mean mixed ", math.mean([1, a, "s", 4]));
    .print("mean big ", math.mean([10000000000000000, 1, -10000000000000000]));
    .print("median even ", math.median([4, 1, 3, 2]), " odd floats ", math.median([2.5, 0.5, 1.5]));
    .print("median negative ", math.median([-3, -1, -2, -4]));
    X = math.mean([2, 4, 6]) + math.median([1, 9, 5]);
    .print("sum ", X);
    .print("sum big ", math.sum([10000000000000000, 1, -10000000000000000]), " floats ", math.sum([0.1, 0.2, 0.3]));
    .print("std_dev floats ", math.std_dev([0.1, 0.2, 0.3])).
