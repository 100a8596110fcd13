package cli

// The shapes of the commands on convoy objects: `list [-A]` of a kind, a command on
// one named object, and what both end with: -o yaml|json, or the text for people.

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// listCommand is `list [-A]` of one kind of namespaced object: the namespace's
// objects, or every namespace's with -A. -o prints the list as the server sent it
// (sorted); an empty list is said on stderr ("No Releases found in namespace team-a.").
type listCommand[L runtime.Object] struct {
	// kinds is the kind's plural as people read it: "Releases".
	kinds string
	// short is the command's one-line help.
	short string
	// list reads the objects of ns, of every namespace when ns is "".
	list func(ctx context.Context, c *Client, ns string) (L, error)
	// format is the table of the list for people.
	format func(list L, allNamespaces bool, now time.Time, t Terminal) string
}

func (l listCommand[L]) command(o *Options) *cobra.Command {
	var allNamespaces bool
	var output string
	cmd := &cobra.Command{
		Use:     "list [-A]",
		Aliases: []string{"ls"},
		Short:   l.short,
		Args:    exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputFormat(output); err != nil {
				return err
			}
			ns, c, err := o.namespaceOrAll(allNamespaces)
			if err != nil {
				return err
			}
			list, err := l.list(cmd.Context(), c, ns)
			if err != nil {
				return err
			}
			return o.show(output, list, func() (string, error) {
				if meta.LenList(list) == 0 {
					fmt.Fprintf(o.Streams.ErrOut, "No %s found %s.\n", l.kinds, inNamespace(ns))
					return "", nil
				}
				return l.format(list, allNamespaces, o.Now(), o.Terminal(o.Streams.Out)), nil
			})
		},
	}
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "list the "+l.kinds+" of every namespace")
	addOutputFlag(cmd, &output)
	return cmd
}

// namespaceOrAll is the namespace a list reads, "" for every namespace (-A), and the
// client.
func (o *Options) namespaceOrAll(allNamespaces bool) (string, *Client, error) {
	ns := ""
	if !allNamespaces {
		var err error
		if ns, err = o.Namespace(); err != nil {
			return "", nil, err
		}
	}
	c, err := o.Client()
	return ns, c, err
}

// inNamespace says where a list looked: "in namespace team-a", or "in any namespace"
// for ns "".
func inNamespace(ns string) string {
	if ns == "" {
		return "in any namespace"
	}
	return "in namespace " + ns
}

// named makes cmd (its Use, Short, Long, Example set) a command on one named object of
// the namespace with -o: one argument, NAME, completed by complete; -o yaml|json into
// output; and a RunE that checks -o and hands run the namespace, name and client.
func (o *Options) named(cmd *cobra.Command, complete cobra.CompletionFunc, output *string,
	run func(ctx context.Context, ns, name string, c *Client) error) *cobra.Command {
	cmd.Args = exactArgs("NAME")
	cmd.ValidArgsFunction = complete
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutputFormat(*output); err != nil {
			return err
		}
		ns, name, c, err := o.releaseArg(args)
		if err != nil {
			return err
		}
		return run(cmd.Context(), ns, name, c)
	}
	addOutputFlag(cmd, output)
	return cmd
}

// show prints obj as -o asks (yaml or json), else writes the text for people that
// text returns; text runs only then, so what only the text needs is read only then.
func (o *Options) show(output string, obj runtime.Object, text func() (string, error)) error {
	if output != "" {
		return printObject(o.Streams.Out, output, obj)
	}
	s, err := text()
	if err != nil {
		return err
	}
	_, err = io.WriteString(o.Streams.Out, s)
	return err
}
