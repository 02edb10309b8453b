package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"dbio/internal/execx"
)

// Shell runs commands on hosts with the user's ssh.
type Shell struct {
	Exec execx.Runner
	// SSH is the ssh program; empty is "ssh" on the PATH.
	SSH string
}

func (s Shell) program() string {
	if s.SSH == "" {
		return "ssh"
	}
	return s.SSH
}

// SSHConfigProblem is why path cannot be given to ssh -F, or nil. ssh
// that cannot read its configuration makes every host look unreachable,
// and only once a run has begun, so the file is checked before anything is
// written. A relative path is from the directory dbio runs in, as ssh -F
// reads it.
func SSHConfigProblem(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%q: %w: give the path of an ssh_config file", path, errors.Unwrap(err))
	}
	if st.IsDir() {
		return fmt.Errorf("%q is a directory: give the path of an ssh_config file", path)
	}
	return nil
}

// args are ssh's arguments for running script on h: the user's keys, agent
// and configuration (or h's ssh_config), never a prompt.
func (h Host) sshArgs(script string) []string {
	var a []string
	if h.SSHConfig != "" {
		a = append(a, "-F", h.SSHConfig)
	}
	// BatchMode: a key that needs a passphrase nobody can type fails at once
	// instead of hanging the run.
	a = append(a, "-o", "BatchMode=yes", h.Destination)
	if script != "" {
		// The login shell reads the command; sh runs it, whatever that shell is.
		a = append(a, "exec sh -c "+ShellQuote(script))
	}
	return a
}

// Command is the ssh command that runs a POSIX shell script on h, for a
// caller that gives it input or starts it in the background.
func (s Shell) Command(h Host, script string) execx.Cmd {
	return execx.Cmd{Name: s.program(), Args: h.sshArgs(script)}
}

// Run runs a POSIX shell script on h and returns what it printed.
func (s Shell) Run(ctx context.Context, h Host, script string) (string, error) {
	res, err := s.Exec.Run(ctx, execx.Cmd{Name: s.program(), Args: h.sshArgs(script)})
	if err != nil {
		return "", fmt.Errorf("host %s (ssh %s): %w", h.Name, h.Destination, err)
	}
	return string(res.Stdout), nil
}

// FioVersion is what fio --version says on h.
func (s Shell) FioVersion(ctx context.Context, h Host) (string, error) {
	out, err := s.Run(ctx, h, ShellQuote(h.FioProgram())+" --version")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// ServerAddress is where h's fio server listens: h.Address, or the host
// name ssh resolves the destination to (ssh -G, which reads the same
// ssh_config the connection does).
func (s Shell) ServerAddress(ctx context.Context, h Host) (string, error) {
	if h.Address != "" {
		return h.Address, nil
	}
	var args []string
	if h.SSHConfig != "" {
		args = append(args, "-F", h.SSHConfig)
	}
	res, err := s.Exec.Run(ctx, execx.Cmd{Name: s.program(), Args: append(args, "-G", h.Destination)})
	if err != nil {
		return "", fmt.Errorf("host %s: ssh -G %s: %w", h.Name, h.Destination, err)
	}
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		if v, ok := strings.CutPrefix(line, "hostname "); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("host %s: ssh -G %s names no host name: give the host an address", h.Name, h.Destination)
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
