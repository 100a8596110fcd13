package localcluster_test

import (
	"os"
	"testing"
	"time"

	"kumodo.io/convoy/internal/localcluster"
)

// RSS and CPUTime read this very process: some MiB resident, and CPU time that grows
// with work; a process that does not exist is an error.
func TestRSSAndCPUTimeOfAProcess(t *testing.T) {
	pid := os.Getpid()
	rss, err := localcluster.RSS(pid)
	if err != nil || rss < 1<<20 {
		t.Errorf("RSS of the test = %d, %v; want at least 1 MiB", rss, err)
	}
	before, err := localcluster.CPUTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if after, _ := localcluster.CPUTime(pid); after >= before+50*time.Millisecond {
			break
		}
	}
	if after, _ := localcluster.CPUTime(pid); after < before+50*time.Millisecond {
		t.Errorf("CPU time went from %s to %s in 5 s of work", before, after)
	}
	if _, err := localcluster.RSS(1 << 30); err == nil {
		t.Error("RSS of a process that does not exist: no error")
	}
	if _, err := localcluster.CPUTime(1 << 30); err == nil {
		t.Error("CPU time of a process that does not exist: no error")
	}
}
