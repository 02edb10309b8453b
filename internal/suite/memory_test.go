package suite

import (
	"strings"
	"testing"
)

// A run's server memory comes from its engine or from the run itself, and a
// list crosses like the buffer pool does, each run named after its cap.
func TestServerMemoryCrossesAndIsChecked(t *testing.T) {
	head := "name = \"mem\"\n[targets.t]\npath = \"/x\"\n[workloads.w]\nkind = \"tpcc\"\nwarehouses = 1\n"
	tests := []struct {
		name, text  string
		wantNames   []string
		wantBytes   []int64
		wantPools   []int64
		wantProblem string
	}{
		{"from the engine",
			"[engines.pg]\nengine = \"postgres\"\nserver_memory = \"512MB\"\n[[runs]]\nworkload = \"w\"\nengine = \"pg\"\ndata = \"t\"\n",
			[]string{"w"}, []int64{512 << 20}, []int64{0}, ""},
		{"crossed with the buffer pool",
			"[engines.pg]\nengine = \"postgres\"\n[[runs]]\nname = \"m\"\nworkload = \"w\"\nengine = \"pg\"\ndata = \"t\"\nbuffer_pool = [\"32MB\", \"1GB\"]\nserver_memory = [\"512MB\", \"4GB\"]\n",
			[]string{"m-32MB-512MB", "m-32MB-4GB", "m-1GB-512MB", "m-1GB-4GB"},
			[]int64{512 << 20, 4 << 30, 512 << 20, 4 << 30}, []int64{32 << 20, 32 << 20, 1 << 30, 1 << 30}, ""},
		{"the run's overrides the engine's",
			"[engines.pg]\nengine = \"postgres\"\nserver_memory = \"8GB\"\n[[runs]]\nworkload = \"w\"\nengine = \"pg\"\ndata = \"t\"\nserver_memory = \"1GB\"\n",
			[]string{"w"}, []int64{1 << 30}, []int64{0}, ""},
		{"not a size",
			"[engines.pg]\nengine = \"postgres\"\n[[runs]]\nworkload = \"w\"\nengine = \"pg\"\ndata = \"t\"\nserver_memory = \"lots\"\n",
			nil, nil, nil, "line 13: runs[0].server_memory: \"lots\": use a size such as 512MB or 4GB"},
		{"an external server",
			"[engines.pg]\nengine = \"postgres\"\ndsn = \"postgres://h/db\"\nserver_memory = \"1GB\"\n",
			nil, nil, nil, "engines.pg.server_memory: applies to a server dbio runs on a target, not to dsn: dbio cannot cap the memory of a server it did not start; drop one of them"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("s.toml", []byte(head+tt.text), testEnv(nil))
			if tt.wantProblem != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantProblem) {
					t.Fatalf("error %v, want %q", err, tt.wantProblem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Runs) != len(tt.wantNames) {
				t.Fatalf("%d runs, want %d", len(p.Runs), len(tt.wantNames))
			}
			for i, r := range p.Runs {
				if r.Name != tt.wantNames[i] || r.ServerMemory != tt.wantBytes[i] || r.BufferPool != tt.wantPools[i] {
					t.Errorf("run %d: %s memory %d pool %d, want %s memory %d pool %d", i, r.Name, r.ServerMemory, r.BufferPool,
						tt.wantNames[i], tt.wantBytes[i], tt.wantPools[i])
				}
			}
		})
	}
}
