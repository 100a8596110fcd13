package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// --default-service-account (lockdown) is a flag of the controller, the observer and dev,
// off by default, and takes a ServiceAccount name only.
func TestDefaultServiceAccountFlag(t *testing.T) {
	cases := map[string]struct {
		value string
		err   string // a part of the error; empty: accepted
	}{
		"off":          {value: ""},
		"a name":       {value: "convoy-deployer"},
		"dotted name":  {value: "deployer.team-a"},
		"upper case":   {value: "Deployer", err: `"Deployer" is not a ServiceAccount name`},
		"with a colon": {value: "system:serviceaccount:a:b", err: "is not a ServiceAccount name"},
	}
	for process, cmd := range map[string]func() *cobra.Command{"controller": newControllerCommand, "observer": newObserverCommand, "dev": newDevCommand} {
		if f := cmd().Flags().Lookup("default-service-account"); f == nil || f.DefValue != "" {
			t.Fatalf("%s: --default-service-account missing or not off by default: %v", process, f)
		}
		for name, tc := range cases {
			t.Run(process+"/"+name, func(t *testing.T) {
				err := cmd().Flags().Set("default-service-account", tc.value)
				switch {
				case tc.err == "" && err != nil:
					t.Errorf("rejected: %v", err)
				case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
					t.Errorf("error %v, want one containing %q", err, tc.err)
				}
			})
		}
	}
}
