package telemetry

import (
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// holdThreadsEnv asks the test binary to be a threaded process for a
// benchmark (startThreads) instead of running tests: it starts that many
// threads, says so with a byte on its output, and waits to be killed.
const holdThreadsEnv = "DBIO_TELEMETRY_HOLD_THREADS"

func TestMain(m *testing.M) {
	if n, err := strconv.Atoi(os.Getenv(holdThreadsEnv)); err == nil {
		holdThreads(n)
	}
	os.Exit(m.Run())
}

// holdThreads keeps n threads of its own, each held by a sleeping
// goroutine locked to it, until the process is killed.
func holdThreads(n int) {
	var ready sync.WaitGroup
	ready.Add(n)
	for range n {
		go func() {
			runtime.LockOSThread()
			ready.Done()
			time.Sleep(time.Hour)
		}()
	}
	ready.Wait()
	os.Stdout.Write([]byte{'\n'})
	time.Sleep(time.Hour)
}
