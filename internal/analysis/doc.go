// Package analysis is everything dbio computes from recorded data: which
// figures a step's throughput and response time are read from, how runs
// compare (A/B studies and comparisons of any number of runs), the
// latency-bounded best fio points and the knee of an I/O-rate curve, the
// largest load kept under a response-time ceiling, and the bottleneck
// verdict of a step's telemetry.
//
// It reads the results contract (internal/results) and nothing else, and
// renders nothing: the report and the terminal turn its answers into
// tables, charts and sentences. (The verdict and the process shares are the
// exception: their sentence is recorded with the step.)
package analysis
