package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/fromhelm"
)

// fromHelmFlags are the flags of release from-helm.
type fromHelmFlags struct {
	repository, name, cluster, helmNamespace, output string
	automatic, dryRun, supersede                     bool
	// helmDriver is --helm-driver as given; driver the storage read (helmDriverOf).
	helmDriver string
	driver     fromhelm.Driver
}

// helmDriverOf is the Helm storage driver that release from-helm reads: that of
// --helm-driver when it was given (set), else that of HELM_DRIVER as helm reads it
// (env), else secret. Helm's other drivers (memory, sql) are refused: from the flag a
// usage error.
func helmDriverOf(flag string, set bool, env string) (fromhelm.Driver, error) {
	if set {
		d, err := fromhelm.ParseDriver(flag)
		if err != nil {
			return "", usageErrorf("--helm-driver: %w", err)
		}
		return d, nil
	}
	d, err := fromhelm.ParseDriver(env)
	if err != nil {
		return "", fmt.Errorf("HELM_DRIVER: %w; give --helm-driver secret or --helm-driver configmap", err)
	}
	return d, nil
}

func newReleaseFromHelmCommand(o *Options) *cobra.Command {
	var f fromHelmFlags
	cmd := &cobra.Command{
		Use:   "from-helm HELM_RELEASE --repository URL [--name NAME] [--cluster CLUSTER] [--helm-driver secret|configmap] [--automatic] [--dry-run]",
		Short: "Create the Release that takes over a deployed Helm release; mark Helm's record superseded after its first apply",
		Long: "Read the deployed Helm release HELM_RELEASE from Helm's storage (Secrets sh.helm.release.v1.<name>.v<revision>, " +
			"or ConfigMaps of the same names with --helm-driver configmap; the default is HELM_DRIVER as helm reads it, else secret) " +
			"on the target cluster (the Cluster of --cluster through its kubeconfig Secret, else the current context) and create " +
			"the equivalent Release in the namespace of -n: the chart of --repository with the name and version the Helm release " +
			"records, the values the user gave Helm (not the chart's defaults), spec.targetNamespace when the Helm release's namespace " +
			"(--helm-namespace, default -n) is another, manual mode unless --automatic, and the annotation " + v1.AnnotationHelmRelease +
			" naming the revision taken over.\n\n" +
			"Helm does not record where a chart came from: --repository must be the repository (https://, http:// or oci://) that holds " +
			"that chart and version.\n\n" +
			"The first apply of the Release takes over the fields Helm's field managers own, runs the chart's upgrade hooks (not its " +
			"install hooks) and renders with .Release.IsUpgrade. Only a deployed Helm release is taken over: a failed or pending " +
			"latest revision is refused. The Release keeps .Release.Name: with a --name other than HELM_RELEASE, objects named after " +
			"the release become new objects.\n\n" +
			"After the Release's first successful apply, run the command again with --supersede: it marks the Helm release's deployed " +
			"record superseded and labels it " + v1.LabelTakenOverBy + "=<namespace>.<release>, so that helm list no longer shows it " +
			"deployed while helm history keeps every revision. Nothing of Helm's history is deleted.",
		Example: "  kubectl convoy release from-helm podinfo -n apps --repository https://stefanprodan.github.io/podinfo --dry-run\n" +
			"  kubectl convoy release from-helm podinfo -n apps --repository oci://ghcr.io/stefanprodan/charts\n" +
			"  kubectl convoy release sync podinfo -n apps --wait\n" +
			"  kubectl convoy release from-helm podinfo -n apps --supersede",
		Args: exactArgs("HELM_RELEASE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputFormat(f.output); err != nil {
				return err
			}
			var err error
			if f.driver, err = helmDriverOf(f.helmDriver, cmd.Flags().Changed("helm-driver"), o.Getenv("HELM_DRIVER")); err != nil {
				return err
			}
			if f.supersede {
				if f.repository != "" || f.automatic {
					return usageErrorf("--supersede reads the Release that took the Helm release over: --repository and --automatic do not apply")
				}
				return o.supersedeHelm(cmd.Context(), args[0], f)
			}
			if f.repository == "" {
				return usageErrorf("--repository is required: Helm does not record where a chart came from; give the https://, http:// or oci:// repository that holds the chart")
			}
			return o.fromHelm(cmd.Context(), args[0], f)
		},
	}
	cmd.Flags().StringVar(&f.repository, "repository", "", "the chart's repository, https://, http:// or oci:// (Helm does not record it)")
	cmd.Flags().StringVar(&f.name, "name", "", "the Release's name (default: HELM_RELEASE; another name changes .Release.Name)")
	cmd.Flags().StringVar(&f.cluster, "cluster", "", "the Cluster where the Helm release runs, read through its kubeconfig Secret (default: the current context's cluster)")
	cmd.Flags().StringVar(&f.helmNamespace, "helm-namespace", "", "the Helm release's namespace (default: the namespace of -n)")
	cmd.Flags().StringVar(&f.helmDriver, "helm-driver", "", "Helm's storage driver to read and mark the records in: secret or configmap (default: HELM_DRIVER as helm reads it, else secret)")
	cmd.Flags().BoolVar(&f.automatic, "automatic", false, "automatic mode (spec.syncPolicy.automatic); default: manual mode, the first apply waits for a sync")
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "print the Release (YAML unless -o json) instead of creating it; with --supersede, say what would be marked")
	cmd.Flags().BoolVar(&f.supersede, "supersede", false, "after the Release's first successful apply: mark the Helm release's deployed record superseded")
	_ = cmd.RegisterFlagCompletionFunc("cluster", func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return o.completeClusterNames(cmd, nil, toComplete)
	})
	addOutputFlag(cmd, &f.output)
	return cmd
}

// helmStorage is Helm's storage d of namespace ns on the target cluster of rel, with
// the user's own credentials.
func (o *Options) helmStorage(ctx context.Context, rel *v1.Release, ns string, d fromhelm.Driver) (*fromhelm.Storage, error) {
	target, err := o.target(ctx, rel)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(target.Config)
	if err != nil {
		return nil, fmt.Errorf("connect to the target cluster: %w", err)
	}
	return fromhelm.NewStorage(ns, d, kube), nil
}

// fromHelm creates (or with --dry-run prints) the Release that takes over the Helm
// release name.
func (o *Options) fromHelm(ctx context.Context, name string, f fromHelmFlags) error {
	ns, err := o.Namespace()
	if err != nil {
		return err
	}
	helmNS := f.helmNamespace
	if helmNS == "" {
		helmNS = ns
	}
	// The Release as far as the target is concerned, to resolve it as the controller does.
	probe := &v1.Release{}
	probe.Namespace, probe.Name, probe.Spec.Cluster = ns, name, f.cluster
	if f.name != "" {
		probe.Name = f.name
	}
	storage, err := o.helmStorage(ctx, probe, helmNS, f.driver)
	if err != nil {
		return err
	}
	history, err := storage.History(ctx, name)
	if err != nil {
		return err
	}
	h, err := fromhelm.Pick(history)
	if err != nil {
		return err
	}
	rel, err := fromhelm.ReleaseFrom(h, fromhelm.Options{Namespace: ns, Name: f.name, Repository: f.repository, Cluster: f.cluster, Automatic: f.automatic})
	if err != nil {
		return err
	}
	if rel.Name != h.Name {
		fmt.Fprintf(o.Streams.ErrOut, "warning: the Release %s renders with .Release.Name %q, the Helm release with %q: objects named after the release become new objects, and the old ones stay\n",
			rel.Name, rel.Name, h.Name)
	}
	if f.dryRun {
		format := f.output
		if format == "" {
			format = "yaml"
		}
		return printObject(o.Streams.Out, format, rel)
	}
	c, err := o.Client()
	if err != nil {
		return err
	}
	created, err := c.CreateRelease(ctx, rel)
	if err != nil {
		return err
	}
	return o.show(f.output, created, func() (string, error) {
		return fromHelmNextSteps(created, fromhelm.RefOf(h), name, f.driver), nil
	})
}

// fromHelmNextSteps is what release from-helm prints once it created rel from the
// Helm release ref, read from Helm's storage d.
func fromHelmNextSteps(rel *v1.Release, ref fromhelm.Ref, helmName string, d fromhelm.Driver) string {
	var b strings.Builder
	fmt.Fprintf(&b, "release.%s/%s created from Helm release %s\n", v1.GroupName, rel.Name, ref)
	fmt.Fprintf(&b, "Next:\n")
	fmt.Fprintf(&b, "  kubectl convoy release diff %s -n %s            # what the first apply changes\n", rel.Name, rel.Namespace)
	if rel.Spec.SyncPolicy.Automatic == nil || !*rel.Spec.SyncPolicy.Automatic {
		fmt.Fprintf(&b, "  kubectl convoy release sync %s -n %s --wait     # the first apply: an upgrade that takes over Helm's fields\n", rel.Name, rel.Namespace)
	}
	supersede := fmt.Sprintf("kubectl convoy release from-helm %s -n %s --supersede", helmName, rel.Namespace)
	if rel.Name != helmName {
		supersede += " --name " + rel.Name
	}
	if d != fromhelm.DriverSecret {
		supersede += " --helm-driver " + string(d)
	}
	fmt.Fprintf(&b, "  %s   # then: helm list no longer shows it deployed; helm history keeps it\n", supersede)
	return b.String()
}

// supersedeHelm marks the Helm release record that the Release took over superseded,
// once the Release was applied successfully.
func (o *Options) supersedeHelm(ctx context.Context, helmName string, f fromHelmFlags) error {
	ns, err := o.Namespace()
	if err != nil {
		return err
	}
	name := f.name
	if name == "" {
		name = helmName
	}
	c, err := o.Client()
	if err != nil {
		return err
	}
	rel, err := c.GetRelease(ctx, ns, name)
	if err != nil {
		return err
	}
	value, ok := rel.Annotations[v1.AnnotationHelmRelease]
	if !ok {
		return fmt.Errorf("release %s/%s has no annotation %s: it did not take over a Helm release (kubectl convoy release from-helm creates one that does)", ns, name, v1.AnnotationHelmRelease)
	}
	ref, err := fromhelm.ParseRef(value)
	if err != nil {
		return fmt.Errorf("release %s/%s: %w", ns, name, err)
	}
	if ref.Name != helmName {
		return fmt.Errorf("release %s/%s took over the Helm release %s, not %q: run kubectl convoy release from-helm %s -n %s --supersede --name %s",
			ns, name, ref, helmName, ref.Name, ns, name)
	}
	storage, err := o.helmStorage(ctx, rel, ref.Namespace, f.driver)
	if err != nil {
		return err
	}
	h, err := storage.Latest(ctx, ref.Name)
	if err != nil {
		return err
	}
	by := fromhelm.TakenOverBy(ns, name)
	if err := fromhelm.CheckSupersede(rel, h); errors.Is(err, fromhelm.ErrAlreadySuperseded) {
		fmt.Fprintf(o.Streams.Out, "Helm release %s is already marked superseded by %s\n", ref, by)
		return nil
	} else if err != nil {
		return err
	}
	if f.dryRun {
		fmt.Fprintf(o.Streams.Out, "Helm release %s would be marked superseded and labelled %s=%s (dry run)\n", ref, v1.LabelTakenOverBy, by)
		return nil
	}
	if err := storage.Supersede(ctx, h, by); err != nil {
		return err
	}
	fmt.Fprintf(o.Streams.Out, "Helm release %s marked superseded and labelled %s=%s: helm list no longer shows it deployed; helm history %s -n %s keeps it\n",
		ref, v1.LabelTakenOverBy, by, ref.Name, ref.Namespace)
	return nil
}
