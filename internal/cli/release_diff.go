package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// helmHookAnnotation marks a chart's hook Jobs, which convoy runs as lifecycle hooks
// rather than applying them.
const helmHookAnnotation = "helm.sh/hook"

func newReleaseDiffCommand(o *Options) *cobra.Command {
	var ref string
	cmd := &cobra.Command{
		Use:   "diff NAME [--ref REF]",
		Short: "Show what the next apply would change on the cluster, as a unified diff",
		Long: "Compare the live objects on the Release's target cluster with a server-side dry-run apply of the " +
			"current render (field manager convoy, as the controller applies), and list the objects a prune " +
			"would delete. Needs read access to the target cluster: the host cluster with your own credentials, " +
			"or a Cluster's kubeconfig Secret. Exit 0 whether or not there are differences.",
		Args:              exactArgs("NAME"),
		ValidArgsFunction: o.completeReleaseNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if ref != "" {
				if err := ValidateRenderRef(ref); err != nil {
					return err
				}
			}
			ns, name, c, err := o.releaseArg(args)
			if err != nil {
				return err
			}
			return o.runDiff(cmd.Context(), c, ns, name, ref)
		},
	}
	cmd.Flags().StringVar(&ref, "ref", "", "diff this render ref (sha256:<64 hex>) instead of the current render")
	return cmd
}

func (o *Options) runDiff(ctx context.Context, c *Client, ns, name, ref string) error {
	rel, err := c.GetRelease(ctx, ns, name)
	if err != nil {
		return err
	}
	rd, err := o.findRender(ctx, c, ns, name, ref)
	if err != nil {
		return err
	}
	manifests, err := gunzip(rd.Manifests)
	if err != nil {
		return fmt.Errorf("render %s of %s/%s: %w", rd.RenderRef, ns, name, err)
	}
	objs, err := DecodeObjects(manifests)
	if err != nil {
		return fmt.Errorf("render %s of %s/%s: %w", rd.RenderRef, ns, name, err)
	}
	cfg, err := o.targetConfig(ctx, c, rel)
	if err != nil {
		return err
	}
	t, err := newTarget(cfg)
	if err != nil {
		return err
	}
	var out strings.Builder
	seen := map[string]bool{}
	for _, u := range objs {
		live, want, err := t.dryRun(ctx, u)
		if err != nil {
			return fmt.Errorf("dry-run apply of %s: %w", objectName(u), err)
		}
		seen[objectKey(u.GroupVersionKind().Group, u.GetKind(), u.GetNamespace(), u.GetName())] = true
		out.WriteString(UnifiedDiff(objectName(u), live, want))
	}
	if rel.Spec.Prune == nil || *rel.Spec.Prune {
		inv, err := c.GetInventory(ctx, ns, name)
		if err != nil {
			return err
		}
		if inv != nil {
			for _, e := range inv.Objects {
				if seen[objectKey(e.Group, e.Kind, e.Namespace, e.Name)] {
					continue
				}
				live, err := t.get(ctx, e.ObjectReference)
				if err != nil {
					return err
				}
				if live == nil || live.GetAnnotations()[v1.AnnotationPrune] == v1.PruneDisabled {
					continue
				}
				out.WriteString(UnifiedDiff(describe(e.ObjectReference)+" (pruned)", normalize(live), nil))
			}
		}
	}
	if out.Len() == 0 {
		fmt.Fprintf(o.Streams.ErrOut, "No differences: the cluster matches render %s.\n", ShortRef(rd.RenderRef))
		return nil
	}
	_, err = io.WriteString(o.Streams.Out, out.String())
	return err
}

// targetConfig is the REST config of the Release's target cluster: the host's for an
// empty spec.cluster, else from the Cluster's kubeconfig Secret.
func (o *Options) targetConfig(ctx context.Context, c *Client, rel *v1.Release) (*rest.Config, error) {
	if rel.Spec.Cluster == "" {
		return o.ConfigFlags.ToRESTConfig()
	}
	cl, err := c.GetCluster(ctx, rel.Spec.Cluster)
	if err != nil {
		return nil, err
	}
	ref := cl.Spec.Kubeconfig.SecretRef
	key := ref.Key
	if key == "" {
		key = "value"
	}
	s, err := c.kube.CoreV1().Secrets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig of Cluster %s (Secret %s/%s): %w; diff needs get on that Secret", cl.Name, ref.Namespace, ref.Name, err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[key])
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig of Cluster %s (Secret %s/%s key %s): %w", cl.Name, ref.Namespace, ref.Name, key, err)
	}
	return cfg, nil
}

// DecodeObjects reads a YAML stream into objects, without the chart's hook Jobs.
func DecodeObjects(manifests []byte) ([]*unstructured.Unstructured, error) {
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifests), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := d.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(u.Object) == 0 {
			continue
		}
		if _, hook := u.GetAnnotations()[helmHookAnnotation]; hook {
			continue
		}
		objs = append(objs, u)
	}
}

// target is a cluster that diff reads and dry-runs applies on.
type target struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

func newTarget(cfg *rest.Config) (*target, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &target{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}, nil
}

func (t *target) resource(gvk schema.GroupVersionKind, ns string) (dynamic.ResourceInterface, error) {
	m, err := t.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return t.dyn.Resource(m.Resource).Namespace(ns), nil
	}
	return t.dyn.Resource(m.Resource), nil
}

// dryRun returns the normalized YAML of the live object (nil when absent) and of the
// object after a server-side dry-run apply by the field manager convoy.
func (t *target) dryRun(ctx context.Context, u *unstructured.Unstructured) (live, want []byte, err error) {
	ri, err := t.resource(u.GroupVersionKind(), u.GetNamespace())
	if err != nil {
		return nil, nil, err
	}
	cur, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, nil, err
	default:
		live = normalize(cur)
	}
	data, err := u.MarshalJSON()
	if err != nil {
		return nil, nil, err
	}
	force := true
	got, err := ri.Patch(ctx, u.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
		FieldManager: v1.FieldManager, Force: &force, DryRun: []string{metav1.DryRunAll},
	})
	if err != nil {
		return nil, nil, err
	}
	return live, normalize(got), nil
}

// get reads an inventory object; nil when it is gone.
func (t *target) get(ctx context.Context, ref v1.ObjectReference) (*unstructured.Unstructured, error) {
	ri, err := t.resource(schema.GroupVersionKind{Group: ref.Group, Version: ref.Version, Kind: ref.Kind}, ref.Namespace)
	if err != nil {
		return nil, err
	}
	u, err := ri.Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

// normalize is the YAML of an object without the fields every write changes.
func normalize(u *unstructured.Unstructured) []byte {
	c := u.DeepCopy()
	for _, f := range []string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	b, _ := yaml.Marshal(c.Object)
	return b
}

func objectName(u *unstructured.Unstructured) string {
	return describe(v1.ObjectReference{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()})
}

func objectKey(group, kind, ns, name string) string {
	return strings.Join([]string{group, kind, ns, name}, "/")
}

// UnifiedDiff is the unified diff of one object between live and want (YAML; nil:
// absent), with three lines of context; empty when they are equal.
func UnifiedDiff(name string, live, want []byte) string {
	if bytes.Equal(live, want) {
		return ""
	}
	from, to := "live/"+name, "render/"+name
	if live == nil {
		from = "/dev/null"
	}
	if want == nil {
		to = "/dev/null"
	}
	d := difflib.UnifiedDiff{
		A: lines(live), B: lines(want),
		FromFile: from, ToFile: to, Context: 3,
	}
	s, err := difflib.GetUnifiedDiffString(d)
	if err != nil {
		return fmt.Sprintf("--- %s\n+++ %s\n(diff failed: %v)\n", from, to, err)
	}
	return s
}

// lines splits YAML into lines that keep their newline.
func lines(b []byte) []string {
	if len(b) == 0 {
		return []string{}
	}
	out := strings.SplitAfter(string(b), "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}
