package as3ap

import (
	"dbio/internal/results"
	"dbio/internal/workload"
)

var _ workload.DataKept = (*Workload)(nil)

// LoadingSettings implements workload.DataKept: the run's own Loading,
// which a run that restored a pristine copy sets to keep the data there.
func (w *Workload) LoadingSettings() *workload.Loading { return &w.cfg.Loading }

// Dataset implements workload.DataKept: the identity of the data this
// run loads, which a pristine copy must have to stand for it.
func (w *Workload) Dataset() results.Dataset { return w.cfg.dataset() }
