package fleet

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
)

// A target on a host, as a run finds it there over ssh: dbio's directory
// made in it as on a local target, and the disks behind it.

// PrepareTarget makes dbio's directory on a remote target, as it does on a
// local one: the target must be a directory (not a link); dbio's directory
// in it (dirName) is made with its marker file, or must be one dbio made
// (a directory with the marker, neither a link); sub is made inside it.
// It returns sub's path. Nothing is made outside the target, and nothing
// that dbio did not make is used.
func (s Shell) PrepareTarget(ctx context.Context, h Host, target, dirName, marker, sub string) (string, error) {
	dir := path.Join(target, dirName)
	work := path.Join(dir, sub)
	script := fmt.Sprintf(`t=%s; d=%s; m=%s; w=%s
if [ -L "$t" ] || [ ! -d "$t" ]; then echo "is not a directory (or is a symbolic link)"; exit 3; fi
if [ -e "$d" ] || [ -L "$d" ]; then
  if [ -L "$d" ] || [ ! -d "$d" ] || [ -L "$m" ] || [ ! -f "$m" ]; then echo "holds $d, which dbio did not make (no marker $m): move it away or choose another target"; exit 4; fi
else
  mkdir "$d" && : > "$m" || exit 5
fi
if [ -L "$w" ]; then echo "$w is a symbolic link: dbio does not follow it"; exit 4; fi
mkdir -p "$w" || exit 5
`, ShellQuote(target), ShellQuote(dir), ShellQuote(path.Join(dir, marker)), ShellQuote(work))
	if out, err := s.Run(ctx, h, script+"echo ok"); err != nil || strings.TrimSpace(out) != "ok" {
		if err == nil {
			err = errors.New(strings.TrimSpace(out))
		}
		return "", fmt.Errorf("target %s:%s: %w", h.Name, target, err)
	}
	return work, nil
}

// devicesScript prints the physical block devices behind a path, one
// kernel name a line, as dbio finds them on a local target: the path's
// device number (stat), then /sys/dev/block from a partition to its disk
// and from a stacked device (dm, md) to its slaves. A file system without
// a block device (tmpfs, overlay, NFS) prints none.
const devicesScript = `x=$(stat -c %%D %s) || exit 5
maj=$(( ((0x$x >> 8) & 0xfff) | ((0x$x >> 32) & ~0xfff) ))
min=$(( (0x$x & 0xff) | ((0x$x >> 12) & ~0xff) ))
[ "$maj" -eq 0 ] && exit 0
walk() (
  p=$(readlink -f "$1") || exit 0
  if [ -e "$p/partition" ]; then walk "$p/.."; exit 0; fi
  found=
  for s in "$p"/slaves/*; do [ -e "$s" ] || continue; found=1; walk "$s"; done
  [ -n "$found" ] || echo "${p##*/}"
)
[ -e /sys/dev/block/$maj:$min ] && walk /sys/dev/block/$maj:$min
exit 0
`

// TargetDevices are the physical block devices behind a path on h, by
// kernel name, sorted; none for a file system without a block device.
func (s Shell) TargetDevices(ctx context.Context, h Host, target string) ([]string, error) {
	out, err := s.Run(ctx, h, fmt.Sprintf(devicesScript, ShellQuote(target)))
	if err != nil {
		return nil, fmt.Errorf("the devices behind %s:%s: %w", h.Name, target, err)
	}
	var devs []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(devs, l) {
			devs = append(devs, l)
		}
	}
	sort.Strings(devs)
	return devs, nil
}
