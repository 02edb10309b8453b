package fleet

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"dbio/internal/execx"
)

// Session is a program that runs on a host over ssh for as long as dbio
// needs it: a fio server, the shell that holds a target's lock, the round
// trips that read a host's clock, dbio itself as a tenant of a run. Its
// input is its lifeline: dbio closes it to end the program (Stop), and when
// dbio dies, however it dies, ssh goes with it and the input closes on the
// host too. Every such program of dbio's is written to end, and to leave
// nothing behind, when its input ends.
type Session struct {
	Host Host

	proc  execx.Process
	stdin *os.File
	// output keeps the last of what the program said on its standard
	// error (and on its standard output, when combined), for an error to
	// quote.
	output *Tail
	ended  chan struct{}
	// err is how ssh ended, set before ended closes.
	err     error
	stopped sync.Once
}

// SessionOutput says what becomes of what a session's program prints.
type SessionOutput struct {
	// Line is given each line of its standard output (without the line
	// break), in order and from one goroutine, as it comes; nil reads and
	// drops them.
	Line func(line string)
	// Combined reads its standard error as its standard output, in one
	// stream; otherwise standard error is only kept (Output).
	Combined bool
}

// outputTail is how much of a session's output Output keeps.
const outputTail = 64 << 10

// StartSession runs script on h as a session. ssh runs in a process
// session of its own, so that Ctrl-C reaches dbio alone, which stops its
// sessions in order; and it gets SIGTERM if dbio dies. ctx ends the
// session when it ends (pass context.WithoutCancel to keep one beyond it).
func (s Shell) StartSession(ctx context.Context, h Host, script string, out SessionOutput) (*Session, error) {
	// Pipes of the system's own, not io.Pipes: ssh holds their ends itself,
	// so its end is seen at once (no copying goroutine for Wait to wait
	// for), and closing its input reaches it however dbio ends.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("host %s: %w", h.Name, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("host %s: %w", h.Name, err)
	}
	x := &Session{Host: h, stdin: inW, output: NewTail(outputTail), ended: make(chan struct{})}
	cmd := s.Command(h, script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, x.output
	if out.Combined {
		cmd.Stderr = outW
	}
	cmd.Setsid, cmd.ParentDeathSignal = true, syscall.SIGTERM
	proc, err := s.Exec.Start(ctx, cmd)
	inR.Close()  // ssh holds its own copies
	outW.Close() //
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("host %s: %w", h.Name, err)
	}
	x.proc = proc
	lines := make(chan struct{})
	go func() {
		defer close(lines)
		defer outR.Close()
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if out.Combined {
				fmt.Fprintln(x.output, sc.Text())
			}
			if out.Line != nil {
				out.Line(sc.Text())
			}
		}
		io.Copy(io.Discard, outR) // a line too long for the scanner must not block ssh
	}()
	go func() {
		err := proc.Wait()
		<-lines // every line is handed on before the session is said to have ended
		x.err = err
		close(x.ended)
	}()
	return x, nil
}

// Send writes a line to the program's input.
func (x *Session) Send(line string) error {
	_, err := fmt.Fprintln(x.stdin, line)
	return err
}

// Ended is closed once the session has ended, and every line it printed
// has been handed on.
func (x *Session) Ended() <-chan struct{} { return x.ended }

// EndsWithin says whether the session ends within d.
func (x *Session) EndsWithin(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-x.ended:
		return true
	case <-t.C:
		return false
	}
}

// Err is how ssh ended once the session has: nil when the program
// exited 0.
func (x *Session) Err() error {
	<-x.ended
	return x.err
}

// Output is the last of what the program printed on its standard error
// (on both of its outputs, when combined).
func (x *Session) Output() string { return x.output.String() }

// Stop closes the program's input, which ends it, and waits until the
// session has ended; ssh is killed if it outlasts timeout, and Stop then
// says so. Later calls return at once, and false.
func (x *Session) Stop(timeout time.Duration) (killed bool) {
	x.stopped.Do(func() {
		x.stdin.Close()
		if !x.EndsWithin(timeout) {
			x.proc.Signal(syscall.SIGKILL)
			<-x.ended
			killed = true
		}
	})
	return killed
}

// Tail keeps the last max bytes written to it, from any goroutine: what a
// program said last, for an error to quote.
type Tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

// NewTail is a Tail of the last max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
