package results

// The records below describe what a run measured on: the engine, the
// storage behind each target, the files dbio kept there. They belong to
// the results contract, so that reading a run needs no engine or target
// package; the packages that find these facts fill them in.

// EngineInfo is what a run records about a database instance.
type EngineInfo struct {
	Engine    string            `json:"engine"`
	Version   string            `json:"version"`
	Managed   bool              `json:"managed"`
	Transport string            `json:"transport,omitempty"`
	DataDir   string            `json:"data_dir,omitempty"`
	LogDir    string            `json:"log_dir,omitempty"`
	Database  string            `json:"database,omitempty"`
	Settings  map[string]string `json:"settings,omitempty"`
	// MemoryLimit is the cap on the server's whole memory (--server-memory),
	// nil when its memory was not capped.
	MemoryLimit *MemoryLimit `json:"memory_limit,omitempty"`
	// Notes explain choices that affect the figures, e.g. how SQLite writers were serialized.
	Notes []string `json:"notes,omitempty"`
}

// MemoryLimit is a cap on a managed server's memory, its page cache
// included, and how it was applied.
type MemoryLimit struct {
	Bytes int64 `json:"bytes"`
	// Mechanism is how the cap was applied: "cgroup v1-memory" or "cgroup v2-memory".
	Mechanism string `json:"mechanism"`
	// Group is the cgroup's directory, while the run lasted.
	Group string `json:"group,omitempty"`
}

// TargetRole is what a target holds: "data", "log" (WAL / redo) or "backup".
type TargetRole string

// Storage is what is behind a target: the filesystem, its block device and
// the physical disks under it.
type Storage struct {
	MountPoint string `json:"mount_point"`
	FSType     string `json:"fs_type"`
	Source     string `json:"source"`
	// DevNumber is the major:minor of the filesystem's device (0:N for virtual filesystems).
	DevNumber string `json:"dev_number"`
	// Device is the block device the filesystem sits on (a partition, dm or md device), if any.
	Device string `json:"device,omitempty"`
	// Physical are the whole disks behind Device, through partitions, device-mapper and md.
	Physical []Disk `json:"physical,omitempty"`
}

// Disk is one physical block device.
type Disk struct {
	Name       string `json:"name"`
	DevNumber  string `json:"dev_number"`
	Model      string `json:"model,omitempty"`
	Rotational bool   `json:"rotational"`
	SizeBytes  uint64 `json:"size_bytes"`
	Scheduler  string `json:"scheduler,omitempty"`
}

// FileExtents is one file's size and extent count.
type FileExtents struct {
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
	Extents int    `json:"extents"`
}
