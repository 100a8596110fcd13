package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Options is what every command shares: the kubeconfig flags (as in kubectl), the IO
// streams, the environment and the clock. Commands read it; only NewCommand fills it.
type Options struct {
	// ConfigFlags are kubectl's --kubeconfig, --context, -n, --as, … flags.
	ConfigFlags *genericclioptions.ConfigFlags
	// Streams are stdin, stdout and stderr.
	Streams genericiooptions.IOStreams
	// Getenv reads the environment (NO_COLOR, TERM).
	Getenv func(string) string
	// Now is the clock; time.Now outside tests.
	Now func() time.Time
	// PollInterval is how often --wait reads the Release; default 1s.
	PollInterval time.Duration

	client *Client
}

// StdStreams are the process's stdin, stdout and stderr.
func StdStreams() genericiooptions.IOStreams {
	return genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

// Namespace is the namespace of -n, or of the kubeconfig's context, or default.
func (o *Options) Namespace() (string, error) {
	ns, _, err := o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	return ns, nil
}

// Client returns the convoy client of the kubeconfig flags, made once.
func (o *Options) Client() (*Client, error) {
	if o.client != nil {
		return o.client, nil
	}
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	c, err := NewClient(cfg)
	if err != nil {
		return nil, err
	}
	o.client = c
	return c, nil
}

// Terminal says how to write to out: whether it is a terminal (progress lines update in
// place) and whether to use colour (a terminal, NO_COLOR unset or empty, TERM not dumb).
func (o *Options) Terminal(out io.Writer) Terminal {
	tty := isTerminal(out)
	return Terminal{
		TTY:   tty,
		Color: tty && o.Getenv("NO_COLOR") == "" && o.Getenv("TERM") != "dumb",
	}
}
