package runner

import (
	"dbio/internal/results"
	"dbio/internal/target"
)

// storageRecord is a target's storage as the results record it.
func storageRecord(st target.Storage) results.Storage {
	out := results.Storage{MountPoint: st.MountPoint, FSType: st.FSType, Source: st.Source, DevNumber: st.DevNumber, Device: st.Device}
	for _, d := range st.Physical {
		out.Physical = append(out.Physical, results.Disk(d))
	}
	return out
}
