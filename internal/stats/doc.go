// Package stats tells what a figure measured over repeated runs says: its
// median with a distribution-free confidence interval and its spread, and
// whether two sets of repeats (A and B) differ beyond the noise between
// repeats of the same configuration. Within one run it gives the interval of
// a per-second series' mean from batch means (SeriesMeanInterval), whose
// batches grow until the seconds' memory no longer narrows it. An A/B study
// that adds runs until it knows compares its sides with a group-sequential
// design (Sequential), whose false-difference rate holds over every look.
//
// Nothing here assumes the repeats are normally distributed: database
// throughput across runs is skewed and often bimodal (a checkpoint that lands
// in one run and not the next), so the centre is the median, its interval
// comes from order statistics, and two samples are compared with the
// Mann-Whitney U test, as benchstat does for Go benchmarks.
//
// # Why not golang.org/x/perf/benchmath
//
// benchmath (and the go-moremath code beneath it) computes the same median
// interval, but was not wrapped, for three reasons found by trying it:
//   - its exact U test doubles one tail of the tied distribution, which is
//     not symmetric when ties are uneven, and so returns p-values above 1
//     (1.33 for {2} against {1, 1}); repeats of throughput figures tie often
//     once rounded, so the exact test here enumerates the tied distribution
//     and counts both tails by distance from the centre;
//   - "too few samples" comes back as a warning string, and only when both
//     sides are smaller than the same threshold, where dbio needs a typed
//     verdict for any pair of sizes, and NewSample sorts its caller's slice;
//   - the module pulls a large requirement graph (cloud storage, plotting)
//     into dbio's go.mod for some 200 lines of arithmetic.
package stats
