package source

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	"helm.sh/helm/v4/pkg/ignore"
	"k8s.io/utils/clock"
)

// DefaultGitCacheBytes bounds the commits kept on disk.
const DefaultGitCacheBytes = 1 << 30

// maxChartFolderBytes bounds what a chart folder of a commit may hold, as the size of
// a chart archive is bounded.
const maxChartFolderBytes = 64 << 20

// commitStore keeps shallow fetches of Git commits on disk, one bare repository per
// commit, named by the commit's hash, shared by every Release of every repository
// that has the commit. It holds at most maxBytes: adding a commit evicts the least
// recently used others.
type commitStore struct {
	dir      string
	maxBytes int64
	clock    clock.PassiveClock

	// mu is held for reading while a commit is read, for writing while commits are
	// added or evicted.
	mu      sync.RWMutex
	commits map[string]*storedCommit
}

type storedCommit struct {
	size     int64
	lastUsed time.Time
}

func newCommitStore(dir string, maxBytes int64, c clock.PassiveClock) *commitStore {
	if maxBytes <= 0 {
		maxBytes = DefaultGitCacheBytes
	}
	s := &commitStore{dir: dir, maxBytes: maxBytes, clock: c, commits: map[string]*storedCommit{}}
	s.load()
	return s
}

// load reads what an earlier process stored, and removes what its interrupted
// fetches left.
func (s *commitStore) load() {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			_ = os.RemoveAll(filepath.Join(s.dir, e.Name())) // an interrupted fetch
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		s.commits[e.Name()] = &storedCommit{size: dirSize(filepath.Join(s.dir, e.Name())), lastUsed: info.ModTime()}
	}
}

// has says whether commit is stored.
func (s *commitStore) has(commit string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.commits[commit]
	if ok {
		c.lastUsed = s.clock.Now()
	}
	return ok
}

// add runs fetch into a new directory and stores its result under the commit it
// returns; then evicts the least recently used commits beyond the bound.
func (s *commitStore) add(commit string, fetch func(dir string) (string, error)) (string, error) {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(s.dir, ".fetch-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	got, err := fetch(tmp)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.commits[got]; !ok {
		if err := os.Rename(tmp, filepath.Join(s.dir, got)); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		s.commits[got] = &storedCommit{size: dirSize(filepath.Join(s.dir, got))}
	}
	s.commits[got].lastUsed = s.clock.Now()
	s.evict(got)
	return got, nil
}

// evict removes the least recently used commits, but keep, until the store holds
// at most maxBytes. Called with mu held for writing.
func (s *commitStore) evict(keep string) {
	var total int64
	names := make([]string, 0, len(s.commits))
	for name, c := range s.commits {
		total += c.size
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return s.commits[a].lastUsed.Compare(s.commits[b].lastUsed) })
	for _, name := range names {
		if total <= s.maxBytes {
			return
		}
		if name == keep {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.dir, name)); err != nil {
			continue
		}
		total -= s.commits[name].size
		delete(s.commits, name)
	}
}

// readCommit calls fn with the object of a stored commit, which stays stored while
// fn runs.
func (s *commitStore) readCommit(commit string, fn func(*object.Commit) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	repo, err := git.PlainOpen(filepath.Join(s.dir, commit))
	if err != nil {
		return sourceNotReady("commit %s is no longer in the cache: %w", shortCommit(commit), err)
	}
	return readRepoCommit(repo, commit, fn)
}

// readRepoCommit calls fn with the object of commit in repo.
func readRepoCommit(repo *git.Repository, commit string, fn func(*object.Commit) error) error {
	c, err := repo.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return sourceNotReady("reading commit %s: %w", shortCommit(commit), err)
	}
	return fn(c)
}

// chartFiles returns the files of the folder chartPath at commit as `helm package`
// takes them: without what .helmignore (and Helm's defaults) leave out, vendored
// charts/ included.
func (s *commitStore) chartFiles(commit, chartPath string) ([]*archive.BufferedFile, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	repo, err := git.PlainOpen(filepath.Join(s.dir, commit))
	if err != nil {
		return nil, sourceNotReady("commit %s is no longer in the cache: %w", shortCommit(commit), err)
	}
	return repoChartFiles(repo, commit, chartPath)
}

// repoChartFiles returns the files of folder chartPath at commit of repo, as
// chartFiles.
func repoChartFiles(repo *git.Repository, commit, chartPath string) ([]*archive.BufferedFile, error) {
	c, err := repo.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return nil, sourceNotReady("reading commit %s: %w", shortCommit(commit), err)
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, sourceNotReady("reading the tree of commit %s: %w", shortCommit(commit), err)
	}
	if chartPath != "" {
		if tree, err = tree.Tree(chartPath); err != nil {
			if errors.Is(err, object.ErrDirectoryNotFound) {
				return nil, sourceNotReady("commit %s has no folder %q; check spec.chart.git.path", shortCommit(commit), chartPath)
			}
			return nil, sourceNotReady("reading folder %q of commit %s: %w", chartPath, shortCommit(commit), err)
		}
	}
	return treeChartFiles(tree, chartPath, commit)
}

// treeChartFiles walks a chart folder's tree as Helm's loader.LoadDir walks a
// directory: .helmignore rules (and Helm's defaults) skip files and whole folders;
// what is left must be regular files.
func treeChartFiles(tree *object.Tree, chartPath, commit string) ([]*archive.BufferedFile, error) {
	rules := ignore.Empty()
	if f, err := tree.File(ignore.HelmIgnore); err == nil {
		content, err := f.Contents()
		if err != nil {
			return nil, sourceNotReady("reading %s of commit %s: %w", path.Join(chartPath, ignore.HelmIgnore), shortCommit(commit), err)
		}
		if rules, err = ignore.Parse(strings.NewReader(content)); err != nil {
			return nil, unappliable("the .helmignore of %s at commit %s: %w", orDot(chartPath), shortCommit(commit), err)
		}
	}
	rules.AddDefaults()
	var files []*archive.BufferedFile
	var total int64
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	var skipped []string // folders ignored: their contents too
	for {
		name, entry, err := walker.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, sourceNotReady("reading folder %s of commit %s: %w", orDot(chartPath), shortCommit(commit), err)
		}
		if slices.ContainsFunc(skipped, func(dir string) bool { return strings.HasPrefix(name, dir+"/") }) {
			continue
		}
		info := treeFileInfo{name: path.Base(name), mode: entry.Mode}
		if entry.Mode == filemode.Dir {
			if rules.Ignore(name, info) {
				skipped = append(skipped, name)
			}
			continue
		}
		if rules.Ignore(name, info) {
			continue
		}
		switch entry.Mode {
		case filemode.Regular, filemode.Executable, filemode.Deprecated:
		case filemode.Submodule:
			return nil, unsupported("%s in %s at commit %s is a Git submodule; convoy reads the chart's own files only: vendor it", name, orDot(chartPath), shortCommit(commit))
		default:
			return nil, unsupported("%s in %s at commit %s is a symbolic link; convoy reads regular files only", name, orDot(chartPath), shortCommit(commit))
		}
		f, err := tree.TreeEntryFile(&entry)
		if err != nil {
			return nil, sourceNotReady("reading %s of commit %s: %w", name, shortCommit(commit), err)
		}
		if total += f.Size; total > maxChartFolderBytes {
			return nil, unsupported("the chart folder %s at commit %s holds more than %d bytes", orDot(chartPath), shortCommit(commit), maxChartFolderBytes)
		}
		content, err := f.Contents()
		if err != nil {
			return nil, sourceNotReady("reading %s of commit %s: %w", name, shortCommit(commit), err)
		}
		files = append(files, &archive.BufferedFile{Name: name, Data: bytes.TrimPrefix([]byte(content), utf8BOM)})
	}
	if !slices.ContainsFunc(files, func(f *archive.BufferedFile) bool { return f.Name == "Chart.yaml" }) {
		return nil, sourceNotReady("folder %s at commit %s is not a chart: it has no Chart.yaml; check spec.chart.git.path", orDot(chartPath), shortCommit(commit))
	}
	return files, nil
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// treeFileInfo is what Helm's ignore rules read of a file: its name and whether it
// is a folder.
type treeFileInfo struct {
	name string
	mode filemode.FileMode
}

func (i treeFileInfo) Name() string { return i.name }
func (i treeFileInfo) Size() int64  { return 0 }
func (i treeFileInfo) Mode() fs.FileMode {
	if i.mode == filemode.Dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i treeFileInfo) ModTime() time.Time { return time.Time{} }
func (i treeFileInfo) IsDir() bool        { return i.mode == filemode.Dir }
func (i treeFileInfo) Sys() any           { return nil }

// dirSize is the size of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
