package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// bindDefaultServiceAccount binds --default-service-account, the lockdown of the
// controller and the observer (docs/operations/tenancy.md, "Multi-tenancy").
func bindDefaultServiceAccount(fs *pflag.FlagSet, name *string) {
	fs.Var((*serviceAccountFlag)(name), "default-service-account",
		"lockdown: a Release without spec.serviceAccountName acts as this ServiceAccount of its own namespace "+
			"(Kubernetes impersonation); empty: such a Release acts as convoy itself")
}

// serviceAccountFlag is a flag whose value must be a ServiceAccount name.
type serviceAccountFlag string

func (f *serviceAccountFlag) String() string { return string(*f) }

func (f *serviceAccountFlag) Type() string { return "name" }

func (f *serviceAccountFlag) Set(v string) error {
	if v != "" {
		if msgs := utilvalidation.IsDNS1123Subdomain(v); len(msgs) > 0 {
			return fmt.Errorf("%q is not a ServiceAccount name: %s", v, strings.Join(msgs, "; "))
		}
	}
	*f = serviceAccountFlag(v)
	return nil
}
