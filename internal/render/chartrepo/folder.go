package chartrepo

import (
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"sync"
	"time"
)

// folderCheckEvery bounds how often a Folder looks at its folder for changes.
const folderCheckEvery = time.Second

// Folder is a Repository of a folder of chart sources that follows the folder: when a
// file under it changed (a chart edited, a folder with a new version added), the next
// request after at most folderCheckEvery serves a repository built anew. A folder that
// no longer builds is answered with 500 and the error (what a Release then shows as
// SourceNotReady) until it is fixed. `convoy dev` serves examples/charts/ with it, so
// that publishing a chart version is copying a chart folder and changing its version.
type Folder struct {
	dir string

	mu        sync.Mutex
	repo      *Repository
	err       error
	stamp     string
	checkedAt time.Time
	now       func() time.Time
}

// NewFolder builds the repository of dir; an error when it does not build.
func NewFolder(dir string) (*Folder, error) {
	f := &Folder{dir: dir, now: time.Now}
	stamp, err := folderStamp(dir)
	if err != nil {
		return nil, fmt.Errorf("chart repository: %w", err)
	}
	repo, err := Build(dir)
	if err != nil {
		return nil, err
	}
	f.repo, f.stamp, f.checkedAt = repo, stamp, f.now()
	return f, nil
}

// Repository is the repository as last built (nil while the folder does not build),
// and the error of the last build.
func (f *Folder) Repository() (*Repository, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refresh()
	return f.repo, f.err
}

// ServeHTTP serves the repository as last built, after a look at the folder.
func (f *Folder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	repo, err := f.Repository()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	repo.ServeHTTP(w, req)
}

// refresh builds the repository again when the folder changed since the last build;
// at most once per folderCheckEvery. f.mu is held.
func (f *Folder) refresh() {
	if f.now().Sub(f.checkedAt) < folderCheckEvery {
		return
	}
	f.checkedAt = f.now()
	stamp, err := folderStamp(f.dir)
	if err != nil {
		f.repo, f.err = nil, fmt.Errorf("chart repository: %w", err)
		f.stamp = ""
		return
	}
	if stamp == f.stamp {
		return
	}
	repo, err := Build(f.dir)
	f.stamp = stamp
	if err != nil {
		f.repo, f.err = nil, err
		return
	}
	f.repo, f.err = repo, nil
}

// folderStamp is what changes when a file under dir is added, removed, renamed,
// resized or written: every path with its size and modification time.
func folderStamp(dir string) (string, error) {
	var b []byte
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b = fmt.Appendf(b, "%s\x00%d\x00%d\x00", path, info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return "", err
	}
	return string(b), nil
}
