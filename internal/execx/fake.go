package execx

import (
	"context"
	"fmt"
	"os"
	"sync"
)

// Fake records the commands it is asked to run and answers from a script, for
// tests of pure logic around a program (argument building, error messages).
// Anything that measures runs the real program.
type Fake struct {
	mu sync.Mutex
	// Calls are the commands run so far, in order.
	Calls []Cmd
	// Respond answers each Run; nil answers success with no output.
	Respond func(c Cmd) (Result, error)
	// Paths answers LookPath; a missing name is not found.
	Paths map[string]string
}

var _ Runner = (*Fake)(nil)

// Run implements Runner.
func (f *Fake) Run(_ context.Context, c Cmd) (Result, error) {
	f.mu.Lock()
	f.Calls = append(f.Calls, c)
	respond := f.Respond
	f.mu.Unlock()
	if respond == nil {
		return Result{}, nil
	}
	return respond(c)
}

// Start implements Runner; the fake process ends at once.
func (f *Fake) Start(ctx context.Context, c Cmd) (Process, error) {
	_, err := f.Run(ctx, c)
	if err != nil {
		return nil, err
	}
	return fakeProcess{}, nil
}

// LookPath implements Runner.
func (f *Fake) LookPath(name string) (string, error) {
	if p, ok := f.Paths[name]; ok {
		return p, nil
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", name)
}

type fakeProcess struct{}

func (fakeProcess) PID() int               { return 0 }
func (fakeProcess) Wait() error            { return nil }
func (fakeProcess) Signal(os.Signal) error { return nil }
