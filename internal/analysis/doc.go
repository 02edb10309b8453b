// Package analysis is everything dbio computes from recorded data: which
// figures a step's throughput and response time are read from, how runs
// compare (A/B studies and comparisons of any number of runs), the
// latency-bounded best fio points and the knee of an I/O-rate curve, the
// largest load kept under a response-time ceiling, the bottleneck verdict
// of a step's telemetry, and what repeats say: every figure over one
// configuration's repeats (Repeated) and whether two configurations differ
// beyond the noise between repeats (CompareRepeated), for every reader of
// repeats alike.
//
// It reads the results contract (internal/results) and nothing else, and
// renders nothing: the report and the terminal turn its answers into
// tables, charts and sentences. (The verdict and the process shares are the
// exception: their sentence is recorded with the step.)
package analysis
