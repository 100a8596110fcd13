package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
)

// -v is a flag of every long-running process; it sets klog's verbosity up to 7 and
// refuses 8 and more, where client-go logs request and response bodies (Secrets).
func TestVerbosityFlag(t *testing.T) {
	cases := map[string]struct {
		v   string
		err string // a part of the error; empty: accepted
	}{
		"default":       {v: "0"},
		"decisions":     {v: "1"},
		"requests":      {v: "7"},
		"bodies":        {v: "8", err: "-v 8 is out of range: use 0 to 7"},
		"curl commands": {v: "10", err: "which hold Secret data"},
		"negative":      {v: "-1", err: "out of range"},
	}
	defer func() { _ = (&logFlags{}).apply("test") }()
	for process, cmd := range map[string]func() *cobra.Command{
		"controller": newControllerCommand, "observer": newObserverCommand, "apiserver": newAPIServerCommand,
	} {
		if f := cmd().Flags().ShorthandLookup("v"); f == nil || f.Name != "v" || f.DefValue != "0" {
			t.Fatalf("%s: no -v, --v flag with default 0: %v", process, f)
		}
		for name, tc := range cases {
			t.Run(process+"/"+name, func(t *testing.T) {
				var f logFlags
				fs := pflag.NewFlagSet(process, pflag.ContinueOnError)
				f.bind(fs)
				if err := fs.Set("v", tc.v); err != nil {
					t.Fatal(err)
				}
				err := f.apply(process)
				switch {
				case tc.err == "" && err != nil:
					t.Fatalf("refused: %v", err)
				case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "convoy "+process)):
					t.Fatalf("error %v, want one naming convoy %s and containing %q", err, process, tc.err)
				case tc.err == "":
					if !klog.V(klog.Level(f.verbosity)).Enabled() || klog.V(klog.Level(f.verbosity+1)).Enabled() {
						t.Errorf("klog's verbosity is not %d", f.verbosity)
					}
				}
			})
		}
	}
}
