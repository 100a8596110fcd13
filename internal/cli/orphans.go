package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/apply"
	"kumodo.io/convoy/internal/targets"
)

// Orphan is an object on a target cluster that convoy applied for a Release that does
// not exist (-o yaml|json prints a list of them).
type Orphan struct {
	// Cluster is the Cluster's name; empty for the host cluster.
	Cluster    string `json:"cluster"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Release names the Release of the object's labels.
	Release ReleaseName `json:"release"`
}

// ReleaseName is a Release's namespace and name.
type ReleaseName struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func newOrphansCommand(o *Options) *cobra.Command {
	var (
		output  string
		cluster []string
		del     bool
	)
	cmd := &cobra.Command{
		Use:   "orphans [--cluster NAME] [--delete]",
		Short: "List (or delete) the objects convoy applied for Releases that no longer exist",
		Long: "orphans looks on the host cluster and on every Cluster (or those of --cluster, \"\" for the host) " +
			"for the objects that convoy applied for a Release — they carry the Release's labels " +
			"convoy.kumodo.io/release-name and release-namespace, and convoy's field manager — whose Release " +
			"does not exist, as after a restore from a backup older than the Release. No controller prunes them. " +
			"Objects annotated convoy.kumodo.io/prune: disabled or helm.sh/resource-policy: keep are left out: they " +
			"were left on purpose. Objects of a Release deleted with deletionPolicy Orphan are listed too: annotate " +
			"those convoy.kumodo.io/prune=disabled to keep them out before --delete.\n\n" +
			"--delete deletes what it lists, each only if it is still the object listed, unchanged.",
		Example: "  kubectl convoy orphans\n  kubectl convoy orphans --cluster eu-1 --delete",
		Args:    exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutputFormat(output); err != nil {
				return err
			}
			if del && output != "" {
				return usageErrorf("--delete prints what it deleted: drop -o")
			}
			return o.orphans(cmd.Context(), cluster, cmd.Flags().Changed("cluster"), del, output)
		},
	}
	addOutputFlag(cmd, &output)
	cmd.Flags().StringSliceVar(&cluster, "cluster", nil, `look only on these Clusters ("" for the host cluster); default: the host and every Cluster`)
	cmd.Flags().BoolVar(&del, "delete", false, "delete the objects listed")
	_ = cmd.RegisterFlagCompletionFunc("cluster", o.completeClusterNames)
	return cmd
}

// targetOrphans are the orphans found on one target, with the applier that deletes them.
type targetOrphans struct {
	cluster string
	applier *apply.Applier
	objects []apply.LabelledObject
}

func (o *Options) orphans(ctx context.Context, only []string, onlyGiven, del bool, output string) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	releases, err := c.ListReleases(ctx, "")
	if err != nil {
		return err
	}
	live := make(map[apply.Owner]bool, len(releases.Items))
	for _, r := range releases.Items {
		live[apply.Owner{Namespace: r.Namespace, Name: r.Name}] = true
	}
	names := only
	if !onlyGiven {
		clusters, err := c.ListClusters(ctx)
		if err != nil {
			return err
		}
		names = []string{""}
		for _, cl := range clusters.Items {
			names = append(names, cl.Name)
		}
	}
	cache, err := o.targetCache()
	if err != nil {
		return err
	}
	var (
		found  []targetOrphans
		failed []string
	)
	for _, name := range names {
		var target *targets.Target
		if name == "" {
			target, err = cache.ResolveAsSelf(ctx, &v1.Release{})
		} else {
			target, err = cache.Cluster(ctx, name)
		}
		if err == nil {
			var objs []apply.LabelledObject
			applier := apply.New(target.Client, apply.Options{})
			if objs, err = orphansOn(ctx, target, applier, live); err == nil {
				found = append(found, targetOrphans{cluster: name, applier: applier, objects: objs})
				continue
			}
		}
		fmt.Fprintf(o.Streams.ErrOut, "%s: %v\n", clusterName(name), err)
		failed = append(failed, clusterName(name))
	}
	if del {
		if err := o.deleteOrphans(ctx, found); err != nil {
			return err
		}
	} else if err := o.printOrphans(found, output); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("could not look on %s", strings.Join(failed, ", "))
	}
	return nil
}

// orphansOn lists the orphans on one target: of every kind it serves that can be
// listed and deleted.
func orphansOn(ctx context.Context, target *targets.Target, applier *apply.Applier, live map[apply.Owner]bool) ([]apply.LabelledObject, error) {
	d, err := target.Discovery()
	if err != nil {
		return nil, err
	}
	applied, err := applier.AppliedObjects(ctx, apply.ListableKinds(d.Resources))
	if err != nil {
		return nil, err
	}
	return apply.Orphans(applied, func(r apply.Owner) bool { return live[r] }), nil
}

// targetCache resolves targets with the user's own credentials, as release diff does.
func (o *Options) targetCache() (*targets.Cache, error) {
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	quietControllerRuntime()
	reader, err := client.New(cfg, client.Options{Scheme: targetScheme})
	if err != nil {
		return nil, fmt.Errorf("connect to the host cluster: %w", err)
	}
	return targets.New(targets.Options{Host: cfg, Reader: reader})
}

func (o *Options) deleteOrphans(ctx context.Context, found []targetOrphans) error {
	var errs []error
	n := 0
	for _, t := range found {
		n += len(t.objects)
		for _, obj := range t.objects {
			deleted, err := t.applier.DeleteOrphan(ctx, obj)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("%s: %w", clusterName(t.cluster), err))
			case deleted:
				fmt.Fprintf(o.Streams.Out, "%s (cluster %s, Release %s/%s)\n",
					describeOrphan(obj.ObjectReference, "deleted"), clusterName(t.cluster), obj.Release.Namespace, obj.Release.Name)
			default:
				fmt.Fprintf(o.Streams.ErrOut, "%s (cluster %s): gone or changed since it was listed\n",
					describeOrphan(obj.ObjectReference, "left alone"), clusterName(t.cluster))
			}
		}
	}
	if n == 0 {
		fmt.Fprintln(o.Streams.ErrOut, "No orphaned objects found.")
	}
	return errors.Join(errs...)
}

// describeOrphan says what happened to an object as kubectl delete does:
// kind.group "name" <what>, then "from namespace ns" for a namespaced one.
func describeOrphan(ref v1.ObjectReference, what string) string {
	kind := strings.ToLower(ref.Kind)
	if ref.Group != "" {
		kind += "." + ref.Group
	}
	s := fmt.Sprintf("%s %q %s", kind, ref.Name, what)
	if ref.Namespace != "" {
		s += " from namespace " + ref.Namespace
	}
	return s
}

func (o *Options) printOrphans(found []targetOrphans, output string) error {
	list := []Orphan{}
	for _, t := range found {
		for _, obj := range t.objects {
			apiVersion := obj.Version
			if obj.Group != "" {
				apiVersion = obj.Group + "/" + obj.Version
			}
			list = append(list, Orphan{
				Cluster: t.cluster, APIVersion: apiVersion, Kind: obj.Kind, Namespace: obj.Namespace, Name: obj.Name,
				Release: ReleaseName{Namespace: obj.Release.Namespace, Name: obj.Release.Name},
			})
		}
	}
	switch output {
	case "json":
		b, err := json.MarshalIndent(map[string]any{"items": list}, "", "    ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(o.Streams.Out, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(map[string]any{"items": list})
		if err != nil {
			return err
		}
		_, err = o.Streams.Out.Write(b)
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(o.Streams.ErrOut, "No orphaned objects found.")
		return nil
	}
	_, err := io.WriteString(o.Streams.Out, FormatOrphans(list))
	return err
}

// FormatOrphans is the table of orphans: CLUSTER, NAMESPACE, KIND (kind.group), NAME,
// RELEASE (namespace/name).
func FormatOrphans(list []Orphan) string {
	rows := make([][]string, 0, len(list))
	for _, e := range list {
		kind := e.Kind
		if g, _, ok := strings.Cut(e.APIVersion, "/"); ok {
			kind += "." + g
		}
		rows = append(rows, []string{clusterName(e.Cluster), orDash(e.Namespace), kind, e.Name, e.Release.Namespace + "/" + e.Release.Name})
	}
	return table([]string{"CLUSTER", "NAMESPACE", "KIND", "NAME", "RELEASE"}, rows)
}
