package controller

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/action"
	loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/cli"
	"kumodo.io/convoy/test/corpus"
)

// takeOverChart is the corpus chart of the take-over: a Deployment and a Service, and
// a value (resources) that adds a field to the Deployment's container.
const takeOverChart = "schema"

// takeOverValues are the values both `helm install` and the Release start with.
const takeOverValues = `{"resources":{"limits":{"memory":"64Mi"}}}`

// A release that `helm install` made, client-side (Helm 3's way, Helm 4 with
// --server-side=false) or server-side (Helm 4's default), is taken over by a Release
// of the same chart, version and values in manual mode: its /sync recreates nothing
// (the same uids, the Deployment's pod template untouched: the same ReplicaSet, no
// rollout), no field stays Helm's, and the objects are as rendered: `kubectl convoy
// release diff` shows nothing (Helm's markers, which the render lacks, are gone).
// A value the Release then drops shows in
// `kubectl convoy release diff` as the field's removal before the /sync, and is gone
// from the object after it: no field stays behind, owned by Helm alone.
func TestTakeOverAHelmRelease(t *testing.T) {
	for _, c := range []struct {
		name       string
		serverSide bool
		// operation is the operation of Helm's managedFields entry.
		operation metav1.ManagedFieldsOperationType
	}{
		{"client-side apply", false, metav1.ManagedFieldsOperationUpdate},
		{"server-side apply", true, metav1.ManagedFieldsOperationApply},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			e.helmInstall(takeOverChart, "web", takeOverValues, c.serverSide)
			deployment := e.liveDeployment("web-api")
			if got := e.helmOperations(deployment); !slices.Equal(got, []metav1.ManagedFieldsOperationType{c.operation}) {
				t.Fatalf("helm's managedFields entries of Deployment web-api: %v, want %s", got, c.operation)
			}
			if !hasMemoryLimit(deployment) {
				t.Fatal("helm install left no memory limit on Deployment web-api")
			}
			replicaSets := e.waitReplicaSets(deployment)
			service := e.service("web-api")

			e.createRelease("web", corpusChart(takeOverChart, "1.0.0"), values(takeOverValues))
			e.waitApplied("web", "False", v1.ReasonWaitingForSync)
			taken := e.syncApplied("web")

			after := e.liveDeployment("web-api")
			if after.UID != deployment.UID || e.service("web-api").UID != service.UID {
				t.Errorf("the take-over recreated objects: Deployment uid %s → %s, Service uid %s → %s",
					deployment.UID, after.UID, service.UID, e.service("web-api").UID)
			}
			if !apiequality.Semantic.DeepEqual(after.Spec.Template, deployment.Spec.Template) {
				t.Errorf("the take-over changed the Deployment's pod template:\n%s", cmp.Diff(deployment.Spec.Template, after.Spec.Template))
			}
			if got := e.waitReplicaSets(after); !slices.Equal(got, replicaSets) {
				t.Errorf("ReplicaSets of web-api after the take-over: %v, want only Helm's %v (a rollout)", got, replicaSets)
			}
			for _, obj := range []client.Object{after, e.service("web-api")} {
				if got := e.helmOperations(obj); len(got) != 0 {
					t.Errorf("%T %s still has entries of helm in managedFields after the take-over: %v", obj, obj.GetName(), got)
				}
			}
			if diff := e.releaseDiff("web"); diff != "" {
				t.Errorf("release diff right after the take-over's /sync, of the render it applied:\n%s", diff)
			}

			e.update("web", values(`{}`))
			dropped := e.waitRender("web", renderRefOf(taken))
			diff := e.releaseDiff("web")
			if !removes(diff, "resources:") || !removes(diff, "memory: 64Mi") {
				t.Errorf("release diff of the render without resources does not remove them:\n%s", diff)
			}
			if rel := e.syncApplied("web"); renderRefOf(rel) != dropped {
				t.Fatalf("the /sync applied render %s, want %s", renderRefOf(rel), dropped)
			}
			if d := e.liveDeployment("web-api"); hasMemoryLimit(d) {
				t.Errorf("the Release's render dropped resources, the Deployment keeps them: %v", d.Spec.Template.Spec.Containers[0].Resources)
			}
		})
	}
}

// corpusChart points the Release at the corpus chart pattern at version, in the
// package's repository (createRelease's).
func corpusChart(pattern, version string) releaseOption {
	return func(r *v1.Release) { r.Spec.Chart.Name, r.Spec.Chart.Version = pattern, version }
}

// helmInstall installs the corpus chart pattern as release name in the test's
// namespace with values, as `helm install` does (Helm's SDK, field manager helm as
// the helm binary names it), client-side (serverSide false: --server-side=false) or
// with server-side apply; it does not wait for the Pods.
func (e *env) helmInstall(pattern, name, values string, serverSide bool) {
	e.t.Helper()
	chrt, err := loader.LoadDir(corpus.Dir(pattern))
	if err != nil {
		e.t.Fatal(err)
	}
	vals := map[string]any{}
	if err := yaml.Unmarshal([]byte(values), &vals); err != nil {
		e.t.Fatal(err)
	}
	kubeconfig, ns := controlPlane.KubeconfigPath(), e.ns
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	cfg := action.NewConfiguration()
	if err := cfg.Init(flags, ns, "secret"); err != nil {
		e.t.Fatal(err)
	}
	// The helm binary's field manager (Helm names it after os.Args[0]).
	kube.ManagedFieldsManager = "helm"
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace = name, ns
	in.ServerSideApply = serverSide
	in.WaitStrategy = kube.HookOnlyStrategy
	in.Timeout = time.Minute
	if _, err := in.RunWithContext(e.ctx, chrt, vals); err != nil {
		e.t.Fatalf("helm install %s %s: %v", name, pattern, err)
	}
}

// helmOperations are the operations of the main resource's managedFields entries of
// manager helm of obj.
func (e *env) helmOperations(obj client.Object) []metav1.ManagedFieldsOperationType {
	var out []metav1.ManagedFieldsOperationType
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager == "helm" && mf.Subresource == "" {
			out = append(out, mf.Operation)
		}
	}
	return out
}

// removes says whether the unified diff takes away a line that is line once
// indentation is trimmed.
func removes(diff, line string) bool {
	for _, l := range strings.Split(diff, "\n") {
		if rest, ok := strings.CutPrefix(l, "-"); ok && !strings.HasPrefix(rest, "--") && strings.TrimSpace(rest) == line {
			return true
		}
	}
	return false
}

// hasMemoryLimit says whether the first container of d has a memory limit.
func hasMemoryLimit(d *appsv1.Deployment) bool {
	_, ok := d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]
	return ok
}

// liveDeployment reads a Deployment of the test's namespace, which must exist.
func (e *env) liveDeployment(name string) *appsv1.Deployment {
	e.t.Helper()
	d := e.deployment(name)
	if d == nil {
		e.t.Fatalf("Deployment %s does not exist", name)
	}
	return d
}

// service reads a Service of the test's namespace, which must exist.
func (e *env) service(name string) *corev1.Service {
	e.t.Helper()
	s := &corev1.Service{}
	if err := e.client.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, s); err != nil {
		e.t.Fatalf("get Service %s: %v", name, err)
	}
	return s
}

// replicaSetUIDs are the uids of the ReplicaSets that d owns, sorted.
func (e *env) replicaSetUIDs(d *appsv1.Deployment) []types.UID {
	e.t.Helper()
	list := &appsv1.ReplicaSetList{}
	if err := e.client.List(e.ctx, list, client.InNamespace(e.ns)); err != nil {
		e.t.Fatal(err)
	}
	var out []types.UID
	for _, rs := range list.Items {
		if owner := metav1.GetControllerOf(&rs); owner != nil && owner.UID == d.UID {
			out = append(out, rs.UID)
		}
	}
	slices.Sort(out)
	return out
}

// waitReplicaSets waits until the Deployment controller has observed the live
// generation of d (it made the ReplicaSet of a new pod template then) and returns
// the uids of d's ReplicaSets.
func (e *env) waitReplicaSets(d *appsv1.Deployment) []types.UID {
	e.t.Helper()
	var uids []types.UID
	e.eventually(fmt.Sprintf("Deployment %s observed", d.Name), func() (bool, string) {
		live := e.liveDeployment(d.Name)
		uids = e.replicaSetUIDs(live)
		return live.Status.ObservedGeneration == live.Generation && len(uids) > 0,
			fmt.Sprintf("observed generation %d of %d, ReplicaSets %v", live.Status.ObservedGeneration, live.Generation, uids)
	})
	return uids
}

// syncApplied POSTs the /sync of name's current render and waits until it is applied.
func (e *env) syncApplied(name string) *v1.Release {
	e.t.Helper()
	ref := renderRefOf(e.release(name))
	e.sync(name, false)
	var rel *v1.Release
	e.eventually(fmt.Sprintf("render %s of %s applied", ref, name), func() (bool, string) {
		rel = e.release(name)
		last := rel.Status.LastSuccessful
		if last == nil {
			return false, "nothing applied yet"
		}
		return last.RenderRef == ref, fmt.Sprintf("last applied %s", last.RenderRef)
	})
	return rel
}

// waitRender waits until name has a render other than previous, waiting for its
// /sync, and returns its ref.
func (e *env) waitRender(name, previous string) string {
	e.t.Helper()
	var ref string
	e.eventually(fmt.Sprintf("a render of %s after %s waiting for its /sync", name, previous), func() (bool, string) {
		rel := e.release(name)
		ref = renderRefOf(rel)
		c := apimeta.FindStatusCondition(rel.Status.Conditions, v1.ConditionApplied)
		waiting := c != nil && c.Reason == v1.ReasonWaitingForSync && c.ObservedGeneration == rel.Generation
		return ref != "" && ref != previous && waiting, fmt.Sprintf("render %s, Applied %v", ref, c)
	})
	return ref
}

// releaseDiff is what `kubectl convoy release diff name` writes to stdout, as the
// admin of the local control plane.
func (e *env) releaseDiff(name string) string {
	e.t.Helper()
	var out, errOut bytes.Buffer
	o := &cli.Options{
		ConfigFlags: genericclioptions.NewConfigFlags(false),
		Streams:     genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Getenv:      func(string) string { return "" },
		Now:         time.Now,
	}
	args := []string{"--kubeconfig", controlPlane.KubeconfigPath(), "release", "diff", name, "-n", e.ns}
	if code := o.Execute(e.ctx, args); code != cli.ExitOK {
		e.t.Fatalf("kubectl convoy release diff %s: exit %d\nstdout:\n%s\nstderr:\n%s", name, code, out.String(), errOut.String())
	}
	return out.String()
}
