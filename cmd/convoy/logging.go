package main

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
)

// maxVerbosity is the highest -v that convoy's processes accept. From 8 on,
// client-go logs the bodies of requests and responses (and from 9 curl commands):
// the Secrets convoy reads (valuesFrom, chart repository credentials, Cluster
// kubeconfigs) and the rendered Secrets it applies would be written to the log.
// 7 logs each request's method, URL, headers (Authorization masked) and status.
// docs/security.md, "Logs"; docs/decisions/0119-verbosity-cap-and-leak-test.md.
const maxVerbosity = 7

// logFlags are the logging flags of convoy's long-running processes.
type logFlags struct {
	verbosity int
}

func (f *logFlags) bind(fs *pflag.FlagSet) {
	fs.IntVarP(&f.verbosity, "v", "v", 0, fmt.Sprintf(
		"log verbosity, 0 to %d: 1 adds what the process decides, 4 each object it reads or writes, "+
			"6-7 each request to Kubernetes (URL, headers without credentials, status); "+
			"above %d is refused, as client-go would log the bodies of requests, Secrets included", maxVerbosity, maxVerbosity))
}

// apply sets klog's verbosity, or refuses one that would log Secret data.
func (f *logFlags) apply(process string) error {
	if f.verbosity < 0 || f.verbosity > maxVerbosity {
		return fmt.Errorf("convoy %s: -v %d is out of range: use 0 to %d (from 8 on client-go logs the bodies of "+
			"requests and responses, which hold Secret data: values from Secrets, kubeconfigs, rendered Secrets)",
			process, f.verbosity, maxVerbosity)
	}
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	return fs.Set("v", strconv.Itoa(f.verbosity))
}
