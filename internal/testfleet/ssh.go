package testfleet

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// writeSSHFiles makes the fleet's client key, each host's host key and
// sshd_config, and the known_hosts and ssh_config that let ssh -F reach every
// host as root without a prompt, and without the user's own keys, agent or
// known hosts.
func (f *Fleet) writeSSHFiles(ctx context.Context) error {
	sshDir := filepath.Join(f.Dir, "ssh")
	if err := os.MkdirAll(sshDir, 0o700); err != nil {
		return err
	}
	f.IdentityFile = filepath.Join(sshDir, "id_ed25519")
	f.KnownHosts = filepath.Join(sshDir, "known_hosts")
	f.SSHConfig = filepath.Join(sshDir, "ssh_config")
	authorized := filepath.Join(sshDir, "authorized_keys")
	if err := f.keygen(ctx, f.IdentityFile, "testfleet "+f.ID); err != nil {
		return err
	}
	pub, err := os.ReadFile(f.IdentityFile + ".pub")
	if err != nil {
		return err
	}
	if err := os.WriteFile(authorized, pub, 0o600); err != nil {
		return err
	}
	var known bytes.Buffer
	config := fmt.Sprintf("# Test fleet %s: the hosts, then what every connection uses.\n", f.ID)
	for _, h := range f.Hosts {
		dir := filepath.Dir(h.Storage)
		hostKey := filepath.Join(dir, "ssh_host_ed25519_key")
		if err := f.keygen(ctx, hostKey, "testfleet "+f.ID+" "+h.Name); err != nil {
			return err
		}
		hostPub, err := os.ReadFile(hostKey + ".pub")
		if err != nil {
			return err
		}
		// A public key file is "type key comment"; known_hosts wants "address type key".
		fields := strings.Fields(string(hostPub))
		if len(fields) < 2 {
			return fmt.Errorf("%s.pub: unexpected %q", hostKey, hostPub)
		}
		fmt.Fprintf(&known, "%s %s %s\n", h.Addr, fields[0], fields[1])
		sshd := strings.Join([]string{
			fmt.Sprintf("ListenAddress %s:%d", h.Addr, SSHPort),
			"HostKey " + quote(hostKey),
			"PidFile " + quote(filepath.Join(dir, "sshd.pid")),
			"AuthorizedKeysFile " + quote(authorized),
			"PermitRootLogin prohibit-password",
			"PubkeyAuthentication yes",
			"PasswordAuthentication no",
			"KbdInteractiveAuthentication no",
			"UsePAM no",
			// The keys live in the test's temporary directory, which sshd's
			// ownership checks were not written for.
			"StrictModes no",
			"UseDNS no",
			"PrintMotd no",
			"PrintLastLog no",
			"X11Forwarding no",
			"Subsystem sftp internal-sftp",
			// A home of the host's own: sessions do not run the machine's root
			// dotfiles (a shell started by sshd reads ~/.bashrc), and what a
			// program keeps in ~ stays on its host.
			"SetEnv " + quote("HOME="+h.Home),
		}, "\n") + "\n"
		if err := os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(sshd), 0o600); err != nil {
			return err
		}
		config += fmt.Sprintf("Host %s\n\tHostName %s\n", h.Name, h.Addr)
	}
	config += strings.Join([]string{
		"Host *",
		"\tUser root",
		"\tIdentityFile " + quote(f.IdentityFile),
		"\tIdentitiesOnly yes",
		"\tIdentityAgent none",
		"\tUserKnownHostsFile " + quote(f.KnownHosts),
		"\tGlobalKnownHostsFile /dev/null",
		"\tStrictHostKeyChecking yes",
		"\tUpdateHostKeys no",
		"\tBatchMode yes",
		"\tPasswordAuthentication no",
		"\tConnectTimeout 10",
		"\tLogLevel ERROR",
	}, "\n") + "\n"
	if err := os.WriteFile(f.KnownHosts, known.Bytes(), 0o600); err != nil {
		return err
	}
	return os.WriteFile(f.SSHConfig, []byte(config), 0o600)
}

// keygen makes an ed25519 key pair without a passphrase.
func (f *Fleet) keygen(ctx context.Context, path, comment string) error {
	out, err := exec.CommandContext(ctx, f.tools.sshKeygen, "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ssh-keygen %s: %w: %s", path, err, bytes.TrimSpace(out))
	}
	return nil
}

// quote puts a path in double quotes for ssh_config and sshd_config, which
// split unquoted values at spaces.
func quote(path string) string {
	return `"` + path + `"`
}
