package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"dbio/internal/blocktrace"
	"dbio/internal/capture"
	"dbio/internal/results"
	"dbio/internal/units"
)

func init() { commandConstructors = append(commandConstructors, newCaptureCmd) }

func newCaptureCmd(app *App) *cobra.Command {
	var (
		devices, targets []string
		duration         time.Duration
		resultsBase      string
		name             string
		traceFS          string
	)
	cmd := &cobra.Command{
		Use:   "capture (--device DEV | --target DIR)... --duration D",
		Short: "Record a database's block I/O while its own workload runs, for replay on other storage",
		Long: `dbio capture records every block request on the devices holding a database
(data and log may be on two: repeat --device or --target) while the database's
own workload runs: when it was issued, read or write or flush, offset, size,
FUA, the issuing process, how long it took and how many were in flight. It
writes a results directory with the compressed trace (trace.dbt.gz) and its
signature (capture.json: IOPS and MB/s by direction second by second, sizes,
read/write mix, sequentiality, flushes, queue depths, latency percentiles).
'dbio replay' plays it on other storage.

Capture only reads the traced devices, through the kernel's block tracepoints
in a tracing instance of its own. It needs root.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if duration <= 0 {
				return usagef("--duration must be positive (e.g. --duration 60s)")
			}
			if len(devices)+len(targets) == 0 {
				return usagef("give the device to capture: --device /dev/sdb, or --target with a directory of the database")
			}
			if err := capture.NeedRoot(os.Geteuid()); err != nil {
				return usagef("%v", err)
			}
			var devs []blocktrace.Device
			seen := map[string]bool{}
			add := func(d blocktrace.Device, err error) error {
				if err != nil {
					return usagef("%v", err)
				}
				if !seen[d.Number()] {
					seen[d.Number()] = true
					devs = append(devs, d)
				}
				return nil
			}
			for _, p := range devices {
				if err := add(capture.DeviceAt(app.SysFS, p)); err != nil {
					return err
				}
			}
			for _, p := range targets {
				if err := add(capture.DeviceUnder(app.SysFS, p)); err != nil {
					return err
				}
			}
			tracer, err := capture.OpenTracer(traceFS, devs)
			if err != nil {
				return usagef("%v", err)
			}
			defer tracer.Close()
			dir, err := results.NewDir(resultsBase, name, "capture directory", app.Now())
			if err != nil {
				return err
			}
			for _, d := range devs {
				fmt.Fprintf(app.Stdout, "capturing %s (%s) for %s into %s\n", d.Name, d.Number(), duration, dir)
			}
			rec, tr, err := capture.Run(cmd.Context(), tracer, capture.Config{
				Devices: devs, Duration: duration, TraceFS: traceFS, Proc: app.SysFS.Proc,
				Command: app.Args, Now: app.Now,
			})
			if err != nil {
				return err
			}
			if err := capture.WriteDir(dir, rec, tr); err != nil {
				return err
			}
			printSignature(app, rec)
			if cmd.Context().Err() != nil {
				return errInterrupted
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&devices, "device", nil, "block device to capture (repeatable), e.g. /dev/nvme0n1")
	fs.StringArrayVar(&targets, "target", nil, "capture the device holding this directory's file system (repeatable)")
	fs.DurationVar(&duration, "duration", 0, "how long to capture, e.g. 60s")
	fs.StringVar(&resultsBase, "results", "results", "directory the capture's results directory is created in")
	fs.StringVar(&name, "name", "capture", "name of the capture's results directory (after its timestamp)")
	fs.StringVar(&traceFS, "tracefs", capture.DefaultTraceFS, "where the kernel's tracing file system is (mounted there when it is not)")
	return cmd
}

// printSignature writes a capture's signature for the terminal.
func printSignature(app *App, rec capture.Record) {
	s := rec.Signature
	w := app.Stdout
	fmt.Fprintf(w, "captured %d requests in %.1f s (dbio's CPU for tracing: %.2f s)\n", rec.Requests, rec.DurationSeconds, rec.TracerCPUSeconds)
	for _, op := range []struct {
		name string
		f    blocktrace.OpFigures
	}{{"reads", s.Reads}, {"writes", s.Writes}, {"flushes", s.Flushes}, {"discards", s.Discards}} {
		if op.f.Requests == 0 {
			continue
		}
		fmt.Fprintf(w, "  %-8s %9d  %9.1f/s  %8.2f MB/s  latency p50 %s  p99 %s  p99.9 %s\n", op.name, op.f.Requests, op.f.PerSecond, op.f.MBps,
			units.FormatMicros(op.f.Latency.P50), units.FormatMicros(op.f.Latency.P99), units.FormatMicros(op.f.Latency.P999))
	}
	fmt.Fprintf(w, "  reads %.0f %% of requests, %.0f %% sequential, %d FUA writes\n", 100*s.ReadFraction, 100*s.SequentialFraction, s.FUAWrites)
	for _, d := range rec.Devices {
		fmt.Fprintf(w, "  %s counters over the capture: %d reads, %d writes, %d flushes\n", d.Name, d.Stats.Reads, d.Stats.Writes, d.Stats.Flushes)
	}
	if rec.LostEvents > 0 {
		fmt.Fprintf(w, "warning: the kernel dropped %d trace events: the trace misses requests\n", rec.LostEvents)
	}
}
