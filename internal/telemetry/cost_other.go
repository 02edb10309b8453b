//go:build !linux

package telemetry

import "time"

// threadCPU is not measured outside Linux, where there is no /proc to sample anyway.
func threadCPU() time.Duration { return 0 }
