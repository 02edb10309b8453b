package telemetry

import (
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPUTime is CLOCK_THREAD_CPUTIME_ID: the CPU time of the calling
// thread, in nanoseconds.
const clockThreadCPUTime = 3

// threadCPU is the CPU time the current OS thread has used. The caller locks
// its goroutine to the thread for the interval it measures.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
