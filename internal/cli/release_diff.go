package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/go-logr/logr"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/diff"
	convoyhooks "kumodo.io/convoy/internal/hooks"
	"kumodo.io/convoy/internal/policy"
	"kumodo.io/convoy/internal/store"
	"kumodo.io/convoy/internal/targets"
)

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
	target, err := o.target(ctx, rel)
	if err != nil {
		return err
	}
	results, hidden, err := ReleaseDiff(ctx, c, target, rel, rd)
	if err != nil {
		return err
	}
	for _, ref := range hidden {
		fmt.Fprintf(o.Streams.ErrOut, "%s: not compared: you may not read the Secrets of namespace %s, so the render shows you its data as digests.\n",
			diff.Describe(ref), rel.Namespace)
	}
	var out strings.Builder
	for _, r := range results {
		out.WriteString(diff.Unified(diff.Describe(r.Object), r))
	}
	if out.Len() == 0 {
		what := "the cluster matches"
		if len(hidden) > 0 {
			what = "the other objects on the cluster match"
		}
		fmt.Fprintf(o.Streams.ErrOut, "No differences: %s render %s.\n", what, ShortRef(rd.RenderRef))
		return nil
	}
	_, err = io.WriteString(o.Streams.Out, out.String())
	return err
}

// ReleaseDiff is what an apply of the render rd of rel would change on the target
// cluster target (internal/diff: the comparison of convoy's apply and of
// the observer's drift check): each object the apply puts there (non-Job chart
// hooks of the apply's run included), then, when rel prunes, the objects of its
// ReleaseInventory that a prune would delete. `kubectl convoy ui` shows the same.
//
// hidden are the rendered Secrets it does not compare: convoy apiserver served the
// Render with their data as digests (the user may not read the Secrets of its
// namespace, docs/security.md), and a dry run of digests would compare nothing
// true. Nor are the inventory's Secrets then read for the prune.
func ReleaseDiff(ctx context.Context, c *Client, target *targets.Target, rel *v1.Release, rd *v1.Render) (results []diff.Result, hidden []v1.ObjectReference, err error) {
	objs, err := AppliedObjects(rel, rd)
	if err != nil {
		return nil, nil, err
	}
	objs, hidden = withoutRedacted(objs)
	prune := rel.Spec.Prune == nil || *rel.Spec.Prune
	var inventory []v1.InventoryObject
	if prune {
		inv, err := store.GetInventory(ctx, c.Reader(), client.ObjectKeyFromObject(rel))
		if err != nil {
			return nil, nil, err
		}
		if inv != nil {
			inventory = inv.Objects
		}
	}
	if len(hidden) > 0 {
		inventory = slices.DeleteFunc(slices.Clone(inventory), func(e v1.InventoryObject) bool { return isSecret(e.ObjectReference) })
	}
	results, err = diff.Release(ctx, target.Client, objs, inventory, prune, 4)
	return results, hidden, err
}

// withoutRedacted splits from objs the Secrets whose data convoy apiserver served as
// digests (v1.AnnotationRedactedData).
func withoutRedacted(objs []*unstructured.Unstructured) (rest []*unstructured.Unstructured, redacted []v1.ObjectReference) {
	for _, o := range objs {
		ref := diff.Reference(o)
		if _, ok := o.GetAnnotations()[v1.AnnotationRedactedData]; ok && isSecret(ref) {
			redacted = append(redacted, ref)
			continue
		}
		rest = append(rest, o)
	}
	return rest, redacted
}

// isSecret says whether ref is a core v1 Secret.
func isSecret(ref v1.ObjectReference) bool { return ref.Group == "" && ref.Kind == "Secret" }

// AppliedObjects are the objects that an apply of the render rd of rel applies
// (diff.Applied): its objects and the non-Job chart hooks of the apply's run.
func AppliedObjects(rel *v1.Release, rd *v1.Render) ([]*unstructured.Unstructured, error) {
	what := fmt.Sprintf("render %s of %s/%s", rd.RenderRef, rel.Namespace, rel.Name)
	decoded, err := store.Objects(rd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	lastSuccessful := ""
	if rel.Status.LastSuccessful != nil {
		lastSuccessful = rel.Status.LastSuccessful.RenderRef
	}
	run := policy.ApplyHookRun(lastSuccessful, rel.Annotations)
	objs, err := diff.Applied(decoded, convoyhooks.Owner{Name: rel.Name, Namespace: rel.Namespace}, run)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return objs, nil
}

// target is the Release's target cluster as internal/targets resolves it for the
// controller (the host for an empty spec.cluster, else the Cluster's kubeconfig
// Secret, inline credentials only), with the user's own credentials: the host's
// config is the user's kubeconfig, the Cluster and its Secret are read as the user,
// and the Release's ServiceAccount is not impersonated.
func (o *Options) target(ctx context.Context, rel *v1.Release) (*targets.Target, error) {
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	quietControllerRuntime()
	reader, err := client.New(cfg, client.Options{Scheme: targetScheme})
	if err != nil {
		return nil, fmt.Errorf("connect to the host cluster: %w", err)
	}
	cache, err := targets.New(targets.Options{Host: cfg, Reader: reader})
	if err != nil {
		return nil, err
	}
	target, err := cache.ResolveAsSelf(ctx, rel)
	if nr, ok := errors.AsType[*targets.NotReadyError](err); ok && nr.Kind == targets.HostReadFailed {
		return nil, fmt.Errorf("the target cluster of Release %s/%s: %w; diff needs get on the Cluster and its kubeconfig Secret",
			rel.Namespace, rel.Name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("the target cluster of Release %s/%s: %w", rel.Namespace, rel.Name, err)
	}
	return target, nil
}

// targetScheme is what target reads on the host: Clusters, Secrets and Namespaces.
var targetScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1.AddToScheme(s))
	return s
}()

var quiet sync.Once

// quietControllerRuntime gives controller-runtime's client (used for the diff) a
// logger that drops everything, so that it never warns on stderr that none was
// set.
func quietControllerRuntime() {
	quiet.Do(func() { ctrllog.SetLogger(logr.Discard()) })
}
