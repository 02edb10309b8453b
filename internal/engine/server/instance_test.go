package server

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"dbio/internal/execx"
)

// noServer is a connector that never connects: RunRestore and Stop only
// reset and close the pools.
type noServer struct{}

func (noServer) Connect(context.Context) (driver.Conn, error) { return nil, errors.New("no server") }
func (noServer) Driver() driver.Driver                        { return nil }

func TestRunRestore(t *testing.T) {
	tests := []struct {
		name     string
		failAt   string
		wantErr  string
		wantData string
	}{
		{"restored", "", "", "backup"},
		{"replace fails", "replace", "the previous files were put back and the server restarted", "live"},
		{"ready fails", "ready", "the previous files were put back and the server restarted", "live"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			base := t.TempDir()
			data := filepath.Join(base, "data")
			writeFile(t, filepath.Join(data, "content"), "live")
			launch := func(ctx context.Context) (*Process, error) {
				return Launch(ctx, execx.Real{}, "sleeper", execx.Cmd{Name: "sleep", Args: []string{"60"}}, filepath.Join(base, "server.log"))
			}
			var in Instance
			if err := in.OpenPools("", func() (*sql.DB, error) { return sql.OpenDB(noServer{}), nil }, 0); err != nil {
				t.Fatal(err)
			}
			first, err := launch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			in.Supervise(first, Supervision{ProcRoot: "/proc", Shutdown: Shutdown{Signal: syscall.SIGTERM, Escalate: syscall.SIGKILL, Grace: 10 * time.Second}})
			defer in.Stop(ctx)

			err = in.RunRestore(ctx, &Restore{
				Src: "the-backup",
				Replace: func(ctx context.Context, r *Restore) error {
					if err := r.SetAside(data, base); err != nil {
						return err
					}
					writeFile(t, filepath.Join(data, "content"), "backup")
					if tt.failAt == "replace" {
						return errors.New("copy failed")
					}
					return nil
				},
				Launch: launch,
				Ready: func(context.Context) error {
					if tt.failAt == "ready" {
						return errors.New("not ready")
					}
					return nil
				},
			})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("RunRestore: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("RunRestore = %v, want %q", err, tt.wantErr)
			}
			<-first.Done()
			if pid := in.ServerPID(); pid == 0 || pid == first.PID() {
				t.Errorf("server PID %d after the restore, first server %d: want a new server", pid, first.PID())
			}
			if got, _ := os.ReadFile(filepath.Join(data, "content")); string(got) != tt.wantData {
				t.Errorf("data holds %q, want %q", got, tt.wantData)
			}
			if left, _ := filepath.Glob(filepath.Join(base, "replaced-*")); len(left) != 0 {
				t.Errorf("set-aside files left behind: %v", left)
			}
			select {
			case err := <-in.Exited():
				t.Errorf("Exited yielded %v for a server a restore replaced", err)
			default:
			}
			if err := in.Stop(ctx); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			if _, open := <-in.Exited(); open {
				t.Error("Exited not closed by Stop")
			}
			if err := in.RunRestore(ctx, &Restore{}); !errors.Is(err, errStopped) {
				t.Errorf("RunRestore after Stop = %v, want %v", err, errStopped)
			}
			if err := in.Exclusive(func() error { return nil }); !errors.Is(err, errStopped) {
				t.Errorf("Exclusive after Stop = %v, want %v", err, errStopped)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
