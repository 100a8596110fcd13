package localcluster

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// A temporary cluster folder is named tempPrefix* and holds ownerFile, the
// process id of the process that started it.
const (
	tempPrefix = "convoy-cluster-"
	ownerFile  = "owner.pid"
)

// sweepStale removes the temporary folders of clusters whose owner died
// without calling Stop (a test binary killed by a timeout or SIGKILL). Their
// processes are already gone: each died with its owner (Pdeathsig).
func sweepStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || alive(pid) {
			continue
		}
		_ = os.RemoveAll(dir)
	}
}

// alive reports whether a process with this id exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
