package fleet

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"dbio/internal/execx"
)

// localShell is a Shell whose "ssh" runs the script here, as the host's
// login shell would: what a session does with its program is then seen
// without a host.
func localShell(t *testing.T) Shell {
	t.Helper()
	ssh := filepath.Join(t.TempDir(), "ssh")
	// The script is ssh's last argument; sh runs it as the host's login shell does.
	if err := os.WriteFile(ssh, []byte("#!/bin/sh\nfor a; do last=$a; done\nexec sh -c \"$last\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return Shell{Exec: execx.Real{Proc: "/proc"}, SSH: ssh}
}

func TestSession(t *testing.T) {
	s := localShell(t)
	h := Host{Name: "h1", Destination: "h1"}

	t.Run("lines in order, input, end", func(t *testing.T) {
		var mu sync.Mutex
		var got []string
		// The program echoes what it reads until its input ends, then says
		// so on its standard error and exits 3.
		x, err := s.StartSession(t.Context(), h, `echo ready; while read l; do echo "got $l"; done; echo "input ended" >&2; exit 3`,
			SessionOutput{Line: func(l string) { mu.Lock(); got = append(got, l); mu.Unlock() }})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range []string{"a", "b"} {
			if err := x.Send(l); err != nil {
				t.Fatal(err)
			}
		}
		if killed := x.Stop(10 * time.Second); killed {
			t.Error("a program that ends with its input was killed")
		}
		// Every line is handed on before the session is said to have ended.
		mu.Lock()
		defer mu.Unlock()
		if want := []string{"ready", "got a", "got b"}; !slices.Equal(got, want) {
			t.Errorf("lines %q, want %q", got, want)
		}
		if x.Err() == nil || !strings.Contains(x.Output(), "input ended") {
			t.Errorf("ended with %v, saying %q; want exit status 3 and its standard error", x.Err(), x.Output())
		}
		if x.Stop(time.Second) {
			t.Error("a second Stop says it killed the session")
		}
	})

	t.Run("combined output", func(t *testing.T) {
		lines := make(chan string, 4)
		x, err := s.StartSession(t.Context(), h, `echo out; echo err >&2`, SessionOutput{Combined: true, Line: func(l string) { lines <- l }})
		if err != nil {
			t.Fatal(err)
		}
		<-x.Ended()
		close(lines)
		var got []string
		for l := range lines {
			got = append(got, l)
		}
		slices.Sort(got)
		if !slices.Equal(got, []string{"err", "out"}) || !strings.Contains(x.Output(), "err") || !strings.Contains(x.Output(), "out") {
			t.Errorf("lines %q, output %q; want both streams in each", got, x.Output())
		}
	})

	t.Run("a program that outlives its input is killed", func(t *testing.T) {
		x, err := s.StartSession(context.WithoutCancel(t.Context()), h, `trap '' TERM HUP; exec 0<&-; echo started; while :; do sleep 1; done`,
			SessionOutput{})
		if err != nil {
			t.Fatal(err)
		}
		if x.EndsWithin(200 * time.Millisecond) {
			t.Fatalf("the program ended by itself: %v", x.Err())
		}
		if !x.Stop(300 * time.Millisecond) {
			t.Error("Stop does not say it killed a program that ignores its input's end")
		}
		select {
		case <-x.Ended():
		default:
			t.Error("the session has not ended after Stop")
		}
	})
}
