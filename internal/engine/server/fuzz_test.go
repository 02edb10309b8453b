package server

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzParentPID reads /proc/<pid>/stat lines: any bytes must not panic,
// and a line the kernel could write, whatever the command name holds
// (spaces, parentheses), gives its parent PID.
func FuzzParentPID(f *testing.F) {
	f.Add([]byte("18157 (bash) S 18151 18076 6657 0 -1 4194304 219 0 0 0\n"), "bash", uint32(18151))
	f.Add([]byte("1 (a) b) S 0 1 1\n"), "a) b) S 7 (", uint32(0))
	f.Add([]byte("1 (x"), "", uint32(1))
	f.Fuzz(func(t *testing.T, raw []byte, comm string, ppid uint32) {
		_, _ = parentPID(strings.NewReader(string(raw)))
		if strings.ContainsAny(comm, "\n") || len(comm) > 64 {
			return // the kernel keeps 15 bytes of the name, and no newline
		}
		line := fmt.Sprintf("42 (%s) S %d 42 42 0 -1 4194304 219 0 0 0\n", comm, ppid)
		got, err := parentPID(strings.NewReader(line))
		if err != nil || got != int(ppid) {
			t.Errorf("%q: parent %d, %v; want %d", line, got, err, ppid)
		}
	})
}
