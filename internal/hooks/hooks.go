// Package hooks is the one home of convoy's hooks: the lifecycle hooks of a Release
// (spec lifecycle.hooks) and the Helm hooks of its chart (objects annotated
// helm.sh/hook). It reads the Helm annotations, decides which hooks an apply runs
// (install or upgrade) and in which phase and batch, names and builds hook Jobs,
// assesses a hook Job's phase and decides which Jobs of older renders go. Both the
// controller and the observer import it; it does no I/O.
package hooks

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	v1 "kumodo.io/convoy/api/v1alpha1"
)

// Helm's hook annotations.
const (
	// Annotation lists the Helm events an object is a hook of.
	Annotation = helmrelease.HookAnnotation
	// WeightAnnotation orders the hooks of one event (an integer; otherwise 0).
	WeightAnnotation = helmrelease.HookWeightAnnotation
	// DeleteAnnotation lists the hook's delete policies.
	DeleteAnnotation = helmrelease.HookDeleteAnnotation
)

// Events: the Helm events convoy runs hooks for.
const (
	PreInstall  = helmrelease.HookPreInstall
	PostInstall = helmrelease.HookPostInstall
	PreUpgrade  = helmrelease.HookPreUpgrade
	PostUpgrade = helmrelease.HookPostUpgrade
	PreDelete   = helmrelease.HookPreDelete
	PostDelete  = helmrelease.HookPostDelete
)

// Delete policies.
const (
	BeforeHookCreation = helmrelease.HookBeforeHookCreation
	HookSucceeded      = helmrelease.HookSucceeded
	HookFailed         = helmrelease.HookFailed
)

// Chart is a Helm hook of a chart: a rendered object annotated helm.sh/hook with at
// least one event that convoy runs.
type Chart struct {
	// Object is the object as rendered.
	Object *unstructured.Unstructured
	// Events are the install, upgrade and delete events it is a hook of, in
	// annotation order.
	Events []helmrelease.HookEvent
	// Weight is helm.sh/hook-weight (0 when absent or not an integer, as in Helm).
	Weight int32
	// DeletePolicies are helm.sh/hook-delete-policy; empty means Helm's default,
	// before-hook-creation.
	DeletePolicies []helmrelease.HookDeletePolicy
}

// Parse reads the Helm hook annotations of u. ok is false for an object that is not
// a hook convoy runs (no helm.sh/hook, or only test, rollback or unknown events: those
// are left out, and warnings say so). what names u in warnings.
func Parse(u *unstructured.Unstructured, what string) (c Chart, ok bool, warnings []string) {
	ann := u.GetAnnotations()
	value, isHook := ann[Annotation]
	if !isHook {
		return Chart{}, false, nil
	}
	var ignored, unknown []string
	for ev := range strings.SplitSeq(value, ",") {
		ev = strings.ToLower(strings.TrimSpace(ev))
		switch e := helmrelease.HookEvent(ev); e {
		case PreInstall, PostInstall, PreUpgrade, PostUpgrade, PreDelete, PostDelete:
			if !slices.Contains(c.Events, e) {
				c.Events = append(c.Events, e)
			}
		case helmrelease.HookTest, "test-success", helmrelease.HookPreRollback, helmrelease.HookPostRollback:
			ignored = append(ignored, ev)
		case "":
		default:
			unknown = append(unknown, ev)
		}
	}
	switch {
	case len(unknown) > 0:
		return Chart{}, false, []string{fmt.Sprintf("%s is left out: unknown Helm hook %q", what, strings.Join(unknown, ","))}
	case len(c.Events) == 0:
		return Chart{}, false, []string{fmt.Sprintf("%s is left out: convoy does not run Helm %s hooks", what, strings.Join(ignored, ","))}
	case len(ignored) > 0:
		warnings = append(warnings, fmt.Sprintf("%s: convoy does not run its Helm %s hooks", what, strings.Join(ignored, ",")))
	}
	// Helm's rule: a weight that is not an integer is 0.
	if w, err := strconv.ParseInt(strings.TrimSpace(ann[WeightAnnotation]), 10, 32); err == nil {
		c.Weight = int32(w)
	}
	for p := range strings.SplitSeq(ann[DeleteAnnotation], ",") {
		switch dp := helmrelease.HookDeletePolicy(strings.TrimSpace(p)); dp {
		case BeforeHookCreation, HookSucceeded, HookFailed:
			c.DeletePolicies = append(c.DeletePolicies, dp)
		case "":
		default:
			warnings = append(warnings, fmt.Sprintf("%s: unknown helm.sh/hook-delete-policy %q is ignored", what, dp))
		}
	}
	c.Object = u
	return c, true, warnings
}

// Has reports whether the hook is one of event.
func (c Chart) Has(event helmrelease.HookEvent) bool { return slices.Contains(c.Events, event) }

// IsJob reports whether u is a batch Job.
func IsJob(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Group == batchv1.GroupName && gvk.Kind == "Job"
}

// Hook is one hook of an apply (or a deletion): a Job to run, or an object (a chart's
// hook that is not a Job: ServiceAccount, Role, ConfigMap, …) to apply before the Jobs
// of its batch start.
type Hook struct {
	// Name is the hook's name: the lifecycle hook's, or the chart object's.
	Name string
	// Phase is v1.HookPreApply or v1.HookPostApply (also for the delete events:
	// PreApply is before the objects are deleted, PostApply after).
	Phase v1.HookPhase
	// Batch orders the hooks of one phase, lowest first (a chart hook's weight).
	Batch int32
	// Job is the name of the hook's Job for this render and phase; empty for an
	// object hook.
	Job string
	// Timeout is how long the Job may run; 0 means DefaultTimeout.
	Timeout time.Duration
	// Object is what to create: the Job, with convoy's labels, or the object.
	Object *unstructured.Unstructured
	// DeletePolicies are a chart hook's delete policies (empty for lifecycle hooks:
	// their Jobs stay until a newer render's hooks succeed).
	DeletePolicies []helmrelease.HookDeletePolicy
}

// IsJob reports whether the hook runs a Job (else it is an object to apply).
func (h Hook) IsJob() bool { return h.Job != "" }

// Deletes reports whether the hook's delete policies include p.
func (h Hook) Deletes(p helmrelease.HookDeletePolicy) bool {
	return slices.Contains(h.DeletePolicies, p)
}

// Run is what a hook run is for (v1.HookRun): the events its chart hooks are chosen by.
type Run = v1.HookRun

// Runs.
const (
	// RunInstall is the first apply of a Release: pre-install and post-install.
	RunInstall = v1.HookRunInstall
	// RunUpgrade is every later apply: pre-upgrade and post-upgrade.
	RunUpgrade = v1.HookRunUpgrade
	// RunDelete is the deletion of a Release: pre-delete and post-delete.
	RunDelete = v1.HookRunDelete
)

// events are the Helm events of run's PreApply and PostApply phases.
func events(r Run) (pre, post helmrelease.HookEvent) {
	switch r {
	case RunInstall:
		return PreInstall, PostInstall
	case RunDelete:
		return PreDelete, PostDelete
	}
	return PreUpgrade, PostUpgrade
}

// Owner is the Release a hook run belongs to.
type Owner struct {
	// Name and Namespace of the Release.
	Name, Namespace string
	// TargetNamespace is where hook Jobs run and namespaced hook objects without a
	// namespace go.
	TargetNamespace string
}

// ForRun lists the hooks of a run of the render renderRef, PreApply first, by batch
// and name: the lifecycle hooks (for install and upgrade runs; they have no delete
// run) and the chart hooks of run's events. A chart hook of both the pre and the post
// event is a hook of both phases: its object is applied in each, its Job runs in each
// under the same name (ChartJobName), as Helm runs it at each event. Lifecycle hooks
// come first, and a chart hook whose name a lifecycle hook uses is left out. Every
// hook Job carries v1.AnnotationHookRun with RunID(run, phase, renderRef). Two hooks
// whose Jobs would have one name in the target namespace (chart Jobs of one name in
// two namespaces) are an error.
func ForRun(owner Owner, renderRef string, run Run, lifecycle []v1.Hook, chart []Chart) ([]Hook, error) {
	var out []Hook
	taken := map[string]bool{}
	// jobs maps a Job name to the hook object (namespace/name) that runs under it.
	jobs := map[string]string{}
	claim := func(job, source string) error {
		if other, ok := jobs[job]; ok && other != source {
			return fmt.Errorf("hooks %s and %s would both run as Job %s in namespace %s: convoy runs every hook Job "+
				"in the target namespace under its own name; rename one", other, source, job, owner.TargetNamespace)
		}
		jobs[job] = source
		return nil
	}
	if run != RunDelete {
		for _, lh := range lifecycle {
			if lh.Job == nil || taken[lh.Name] {
				continue
			}
			taken[lh.Name] = true
			h := Hook{Name: lh.Name, Phase: lh.Phase, Batch: lh.Batch, Job: JobName(owner.Name, lh.Name, renderRef)}
			if err := claim(h.Job, "lifecycle hook "+lh.Name); err != nil {
				return nil, err
			}
			if lh.Timeout != nil {
				h.Timeout = lh.Timeout.Duration
			}
			job, err := buildJob(owner, h, RunID(run, h.Phase, renderRef), *lh.Job, nil, nil)
			if err != nil {
				return nil, err
			}
			h.Object = job
			out = append(out, h)
		}
	}
	pre, post := events(run)
	for _, c := range chart {
		name := c.Object.GetName()
		if taken[name] {
			continue
		}
		for _, phase := range []v1.HookPhase{v1.HookPreApply, v1.HookPostApply} {
			event := pre
			if phase == v1.HookPostApply {
				event = post
			}
			if !c.Has(event) {
				continue
			}
			h := Hook{Name: name, Phase: phase, Batch: c.Weight, DeletePolicies: c.DeletePolicies}
			if !IsJob(c.Object) {
				obj := c.Object.DeepCopy()
				v1.SetNameLabel(obj, v1.LabelHook, name)
				h.Object = obj
			} else {
				h.Job = ChartJobName(name)
				source := "Job " + name
				if ns := c.Object.GetNamespace(); ns != "" {
					source = "Job " + ns + "/" + name
				}
				if err := claim(h.Job, source); err != nil {
					return nil, err
				}
				var job batchv1.Job
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(c.Object.Object, &job); err != nil {
					return nil, fmt.Errorf("hook Job %s: not a valid Job: %w", name, err)
				}
				// Helm watches a hook Job until it ends, so charts set
				// ttlSecondsAfterFinished: 0 (ingress-nginx's admission Jobs); convoy
				// reads the Job at its next reconcile and must find it: the delete
				// policies decide when it goes.
				job.Spec.TTLSecondsAfterFinished = nil
				obj, err := buildJob(owner, h, RunID(run, phase, renderRef), job.Spec, c.Object.GetLabels(), c.Object.GetAnnotations())
				if err != nil {
					return nil, err
				}
				h.Object = obj
			}
			out = append(out, h)
		}
	}
	Sort(out)
	return out, nil
}

// Sort orders hooks as they run: PreApply first, then by batch, then Jobs after
// objects (Helm's kind order puts Jobs late), then by name.
func Sort(hs []Hook) {
	slices.SortStableFunc(hs, func(a, b Hook) int {
		if a.Phase != b.Phase {
			if a.Phase == v1.HookPreApply {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Batch, b.Batch), compareBool(a.IsJob(), b.IsJob()),
			cmp.Compare(KindRank(a.kind()), KindRank(b.kind())), strings.Compare(a.kind(), b.kind()),
			strings.Compare(a.Name, b.Name))
	})
}

// kind is the kind of the hook's object; empty without one.
func (h Hook) kind() string {
	if h.Object == nil {
		return ""
	}
	return h.Object.GetKind()
}

// KindRank orders kinds as Helm installs them (its InstallOrder), with
// CustomResourceDefinitions first; kinds Helm does not know come after. Helm sorts the
// hooks of one weight this way too (ServiceAccount, then ClusterRole, then
// ClusterRoleBinding, then Job), and renders order their objects by it.
func KindRank(kind string) int {
	if kind == "CustomResourceDefinition" {
		return -1
	}
	if i := slices.Index(releaseutil.InstallOrder, kind); i >= 0 {
		return i
	}
	return len(releaseutil.InstallOrder)
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// buildJob is the one Job builder: the hook's Job in the target namespace, with the
// chart's labels and annotations, convoy's labels that name the Release and the hook,
// and the annotation that names the run (runID).
func buildJob(owner Owner, h Hook, runID string, spec batchv1.JobSpec, labels, annotations map[string]string) (*unstructured.Unstructured, error) {
	job := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: batchv1.SchemeGroupVersion.String(), Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Namespace: owner.TargetNamespace, Name: h.Job, Labels: map[string]string{},
			Annotations: map[string]string{}},
		Spec: *spec.DeepCopy(),
	}
	maps.Copy(job.Labels, labels)
	maps.Copy(job.Annotations, annotations)
	job.Annotations[v1.AnnotationHookRun] = runID
	v1.SetReleaseLabels(job, owner.Name, owner.Namespace)
	v1.SetNameLabel(job, v1.LabelHook, h.Name)
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(job)
	if err != nil {
		return nil, fmt.Errorf("hook Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	u := &unstructured.Unstructured{Object: obj}
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}

// legacyPostSuffix was added to the hook name in the Job name of the PostApply run of
// a chart hook that is also a PreApply hook, before chart hook Jobs kept the chart's
// names.
const legacyPostSuffix = "-post"

// LegacyJobNames are the names an older convoy gave the Job of a hook for a render:
// that of its run in one phase, and that of the PostApply run of a hook of both
// phases. Only to read a status.hooks written before status.hooks[].renderRef.
func LegacyJobNames(release, hook, renderRef string) []string {
	return []string{JobName(release, hook, renderRef), JobName(release, hook+legacyPostSuffix, renderRef)}
}

// maxJobName is the longest Job name the API server accepts: the Job controller
// copies the name into the job-name label of its pods, and a label value has at most
// 63 characters.
const maxJobName = validation.LabelValueMaxLength

// ChartJobName is the name of the Job of a chart's hook Job named name: the chart's
// own name, as Helm creates it, whenever the API server accepts it for a Job (a DNS
// subdomain of at most 63 characters). Any other name (Helm's install fails on it) is
// made one: <name lowercase, each character other than a-z, 0-9 and '-' made '-', cut
// to 54 characters>-<first 8 hex digits of sha256(name)>. Either way it is the same for
// every render, so a new run deletes the Job of the previous one first (Helm's
// before-hook-creation).
func ChartJobName(name string) string {
	if len(name) <= maxJobName && len(validation.IsDNS1123Subdomain(name)) == 0 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	digest := hex.EncodeToString(sum[:])[:8]
	readable := dnsLabel(name)
	if len(readable) > maxJobName-len(digest)-1 {
		readable = strings.TrimRight(readable[:maxJobName-len(digest)-1], "-")
	}
	if readable == "" {
		return "hook-" + digest
	}
	return readable + "-" + digest
}

// JobName is the name of the Job of the lifecycle hook hook for a render of the
// Release release: <release>-<hook>-<first 10 hex digits of the render ref>,
// lowercase, with every character other than a-z, 0-9 and '-' replaced by '-'. When
// that is longer than 63 characters, <release>-<hook> is cut and followed by the
// first 8 hex digits of its sha256, so that names stay distinct: <cut>-<8 hex>-<10 hex>.
func JobName(release, hook, renderRef string) string {
	short := v1.RenderRef(renderRef).Short()
	prefix := dnsLabel(release + "-" + hook)
	if len(prefix)+1+len(short) <= maxJobName {
		return prefix + "-" + short
	}
	sum := sha256.Sum256([]byte(release + "-" + hook))
	cut := strings.TrimRight(prefix[:maxJobName-len(short)-10], "-")
	return cut + "-" + hex.EncodeToString(sum[:])[:8] + "-" + short
}

func dnsLabel(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '-'
	}, s)
	return strings.Trim(s, "-")
}

// OldJob is a hook Job of the Release found on the target.
type OldJob struct {
	Name      string
	Created   time.Time
	Succeeded bool
}

// OldJobsToDelete decides which hook Jobs of other renders go once the hooks of the
// current render (whose Job names are current) succeeded: all of them but the most
// recent one that did not succeed (it failed, timed out or never finished), kept for
// its logs.
func OldJobsToDelete(jobs []OldJob, current map[string]bool) []string {
	keep := -1
	for i, j := range jobs {
		if current[j.Name] || j.Succeeded {
			continue
		}
		if keep < 0 || jobs[keep].Created.Before(j.Created) {
			keep = i
		}
	}
	var out []string
	for i, j := range jobs {
		if current[j.Name] || i == keep {
			continue
		}
		out = append(out, j.Name)
	}
	return out
}
