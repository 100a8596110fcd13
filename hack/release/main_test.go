package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func platform(goos, goarch, bin string, files ...string) Platform {
	p := Platform{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"os": goos, "arch": goarch}}, Bin: bin}
	for _, f := range files {
		p.Files = append(p.Files, FileOperation{From: f, To: "."})
	}
	return p
}

// The same files give the same archive bytes, so a release's sha256 can be checked
// by building it again.
func TestArchivesAreReproducible(t *testing.T) {
	files := []archiveFile{{name: "kubectl-convoy", mode: 0o755, data: []byte("binary")}, {name: "LICENSE", mode: 0o644, data: []byte("license")}}
	mtime := time.Unix(1764669845, 0)
	for name, pack := range map[string]func([]archiveFile, time.Time) ([]byte, error){"tar.gz": tarGzArchive, "zip": zipArchive} {
		a, err := pack(files, mtime)
		if err != nil {
			t.Fatal(err)
		}
		b, err := pack(files, mtime)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two archives of the same files differ", name)
		}
	}
}

func TestSelectPlatforms(t *testing.T) {
	all := []Platform{platform("linux", "amd64", "kubectl-convoy"), platform("windows", "arm64", "kubectl-convoy.exe")}
	got, err := selectPlatforms(all, []string{"windows/arm64"})
	if err != nil || len(got) != 1 || got[0].OSArch() != "windows/arm64" {
		t.Errorf("selectPlatforms(windows/arm64) = %v, %v", got, err)
	}
	if got, err := selectPlatforms(all, nil); err != nil || len(got) != 2 {
		t.Errorf("selectPlatforms(all) = %v, %v", got, err)
	}
	if _, err := selectPlatforms(all, []string{"linux/riscv64"}); err == nil || !strings.Contains(err.Error(), "not a platform of the krew manifest") {
		t.Errorf("selectPlatforms(linux/riscv64): %v", err)
	}
	expr := Platform{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "os", Operator: metav1.LabelSelectorOpIn, Values: []string{"linux"}}}}}
	if _, err := selectPlatforms([]Platform{expr}, nil); err == nil {
		t.Error("a platform selected by matchExpressions was accepted")
	}
}

// A manifest that krew could not install from the archive is refused before
// anything is built.
func TestPackRefusesWhatKrewCouldNotInstall(t *testing.T) {
	o := options{root: t.TempDir(), out: t.TempDir(), version: "v0.1.0", log: io.Discard}
	for name, tc := range map[string]struct {
		p    Platform
		want string
	}{
		"windows bin without .exe": {platform("windows", "amd64", "kubectl-convoy", "kubectl-convoy"), `bin is "kubectl-convoy"`},
		"files without the binary": {platform("linux", "amd64", "kubectl-convoy", "LICENSE"), "does not copy kubectl-convoy"},
		"a glob":                   {platform("linux", "amd64", "kubectl-convoy", "kubectl-convoy", "*.md"), "single files"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := o.pack(tc.p, t.TempDir()); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("pack: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestVersionMustBeSemverWithV(t *testing.T) {
	for _, v := range []string{"", "0.1.0", "v0.1", "vnext"} {
		if err := run(options{version: v, log: io.Discard}); err == nil {
			t.Errorf("-version %q was accepted", v)
		}
	}
}
