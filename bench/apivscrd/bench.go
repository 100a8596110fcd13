package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/bench/internal/benchenv"
	"kumodo.io/convoy/internal/apiserver"
)

// benchUser is the non-admin user the requests are sent as.
const benchUser = "bench-user"

// crdGroup is the group of the CRD that stands for convoy's Release.
const crdGroup = "crdbench.kumodo.io"

const (
	seqNamespace  = "bench-seq"
	listNamespace = "bench-list"
	otherPrefix   = "bench-other-"
)

// serve runs convoy apiserver with `convoy apiserver`'s flags (the bench re-executed
// as benchenv.APIServerCommand), until SIGTERM.
func serve(args []string) int {
	opts := apiserver.NewOptions()
	fs := pflag.NewFlagSet(benchenv.APIServerCommand, pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := opts.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "convoy apiserver:", err)
		return 1
	}
	return 0
}

// side is one of the compared APIs: convoy's Release through the aggregator, the same
// straight to convoy apiserver, or the CRD.
type side struct {
	name string
	gvr  schema.GroupVersionResource
	dyn  dynamic.Interface
	raw  rest.Interface
	sync bool // POST /sync, else an annotation patch
}

func (s *side) obj(ns, name string) *unstructured.Unstructured {
	r := &convoyv1alpha1.Release{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"bench": "apivscrd"}},
		Spec: convoyv1alpha1.ReleaseSpec{
			Chart:  convoyv1alpha1.ChartSource{Repository: "https://charts.example.com", Name: "podinfo", Version: "6.7.1"},
			Values: &runtime.RawExtension{Raw: []byte(`{"replicaCount":2,"ui":{"message":"hello"},"resources":{"limits":{"memory":"128Mi"}}}`)},
		},
	}
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(b, &u.Object); err != nil {
		panic(err)
	}
	u.SetAPIVersion(s.gvr.GroupVersion().String())
	u.SetKind("Release")
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u
}

func (s *side) res(ns string) dynamic.ResourceInterface { return s.dyn.Resource(s.gvr).Namespace(ns) }

func (s *side) create(ctx context.Context, ns, name string) error {
	_, err := s.res(ns).Create(ctx, s.obj(ns, name), metav1.CreateOptions{})
	return err
}

func (s *side) statusPatch(ctx context.Context, ns, name string, i int) error {
	p := fmt.Sprintf(`{"status":{"conditions":[{"type":"Bench","status":"True","reason":"Bench","message":"%d","lastTransitionTime":%q,"observedGeneration":1}]}}`,
		i, time.Now().UTC().Format(time.RFC3339))
	_, err := s.res(ns).Patch(ctx, name, types.MergePatchType, []byte(p), metav1.PatchOptions{}, "status")
	return err
}

func (s *side) syncOrAnnotate(ctx context.Context, ns, name string, i int) error {
	if s.sync {
		return s.raw.Post().AbsPath("/apis", s.gvr.Group, s.gvr.Version, "namespaces", ns, s.gvr.Resource, name, "sync").Do(ctx).Error()
	}
	p := fmt.Sprintf(`{"metadata":{"annotations":{"convoy.kumodo.io/sync-requested-at":%q}}}`, time.Now().UTC().Format(time.RFC3339Nano)+strconv.Itoa(i))
	_, err := s.res(ns).Patch(ctx, name, types.MergePatchType, []byte(p), metav1.PatchOptions{})
	return err
}

func (s *side) labelPatch(ctx context.Context, ns, name, v string) error {
	p := fmt.Sprintf(`{"metadata":{"labels":{"bench-write":%q}}}`, v)
	_, err := s.res(ns).Patch(ctx, name, types.MergePatchType, []byte(p), metav1.PatchOptions{})
	return err
}

// env is the control plane, convoy apiserver, the CRD and the user.
type env struct {
	*benchenv.Env
	sides      []*side
	port       int    // convoy apiserver's
	kubeconfig string // the user's
}

func start(ctx context.Context, cfg config) (*env, error) {
	bin := cfg.convoyBin
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	be, err := benchenv.Start(ctx, bin, benchenv.Options{Dir: cfg.stateDir, Profiling: cfg.profileDir != ""})
	if err != nil {
		return nil, err
	}
	e := &env{Env: be}
	if err := e.installCRD(ctx); err != nil {
		e.Stop()
		return nil, err
	}
	user, kubeconfig := e.Admin, e.Cluster.KubeconfigPath()
	if !cfg.admin {
		if user, err = e.user(ctx); err != nil {
			e.Stop()
			return nil, err
		}
		if kubeconfig, err = e.Cluster.UserKubeconfig(benchUser); err != nil {
			e.Stop()
			return nil, err
		}
	}
	e.kubeconfig = kubeconfig
	user = rest.CopyConfig(user)
	user.QPS, user.Burst = 5000, 10000
	direct := e.Direct(user)
	for _, s := range []struct {
		name string
		cfg  *rest.Config
		gv   schema.GroupVersion
	}{
		{"convoy", user, convoyv1alpha1.SchemeGroupVersion},
		{"convoy direct", direct, convoyv1alpha1.SchemeGroupVersion},
		{"CRD", user, schema.GroupVersion{Group: crdGroup, Version: "v1alpha1"}},
	} {
		d, err := dynamic.NewForConfig(s.cfg)
		if err != nil {
			e.Stop()
			return nil, err
		}
		kc, err := kubernetes.NewForConfig(s.cfg)
		if err != nil {
			e.Stop()
			return nil, err
		}
		e.sides = append(e.sides, &side{name: s.name, gvr: s.gv.WithResource("releases"), dyn: d, raw: kc.CoreV1().RESTClient(), sync: s.gv.Group == convoyv1alpha1.GroupName})
	}
	host := strings.TrimPrefix(direct.Host, "https://127.0.0.1:")
	e.port, _ = strconv.Atoi(host)
	for _, ns := range []string{seqNamespace, listNamespace} {
		if err := e.EnsureNamespace(ctx, ns); err != nil {
			e.Stop()
			return nil, err
		}
	}
	return e, nil
}

// installCRD installs releases.crdbench.kumodo.io: namespaced, kind Release, spec and
// status free-form, a status subresource, as convoy's Release has.
func (e *env) installCRD(ctx context.Context) error {
	c, err := apiextensionsclient.NewForConfig(e.Admin)
	if err != nil {
		return err
	}
	preserve := true
	free := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "releases." + crdGroup},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: crdGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "releases", Singular: "release", Kind: "Release", ListKind: "ReleaseList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1alpha1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": free, "status": free},
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
	if _, err := c.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("installing the CRD: %w", err)
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// user is a non-admin user with every verb on both groups' releases (and their
// subresources) in every namespace, by one ClusterRole.
func (e *env) user(ctx context.Context) (*rest.Config, error) {
	const name = benchUser
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{convoyv1alpha1.GroupName, crdGroup},
			Resources: []string{"releases", "releases/status", "releases/sync"},
			Verbs:     []string{"*"},
		}},
	}
	if _, err := e.Kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}},
	}
	if _, err := e.Kube.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	return e.Cluster.UserConfig(name)
}

// result is one measurement of one side.
type result struct {
	lat     []time.Duration // per request, or per run for lists
	total   time.Duration
	errs    int
	firstEr string
	n       int     // requests sent (0: len(lat) + errs)
	sars    float64 // SubjectAccessReviews kube-apiserver served during it
	trs     float64 // TokenReviews
}

func (r *result) add(d time.Duration, err error) {
	if err != nil {
		r.errs++
		if r.firstEr == "" {
			r.firstEr = err.Error()
		}
		return
	}
	r.lat = append(r.lat, d)
}

func (r *result) requests() int {
	if r.n > 0 {
		return r.n
	}
	return len(r.lat) + r.errs
}

func (r *result) pct(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	s := slices.Clone(r.lat)
	slices.Sort(s)
	i := int(p * float64(len(s)-1))
	return s[i]
}

// reviews counts kube-apiserver's SubjectAccessReviews and TokenReviews served so far.
func (e *env) reviews(ctx context.Context) (sar, tr float64) {
	m, err := e.KubeMetrics(ctx)
	if err != nil {
		return 0, 0
	}
	c := benchenv.Counts(m, "apiserver_request_total", "resource")
	return c["subjectaccessreviews"], c["tokenreviews"]
}

// measure runs f and records the reviews kube-apiserver served meanwhile.
func (e *env) measure(ctx context.Context, f func(r *result)) *result {
	r := &result{}
	s0, t0 := e.reviews(ctx)
	start := time.Now()
	f(r)
	r.total = time.Since(start)
	s1, t1 := e.reviews(ctx)
	r.sars, r.trs = s1-s0, t1-t0
	return r
}

func name(prefix string, i int) string { return fmt.Sprintf("%s-%05d", prefix, i) }

func (e *env) sequential(ctx context.Context, n int, op func(ctx context.Context, i int) error) *result {
	return e.measure(ctx, func(r *result) {
		for i := range n {
			if ctx.Err() != nil {
				return
			}
			t := time.Now()
			err := op(ctx, i)
			r.add(time.Since(t), err)
		}
	})
}

func (e *env) concurrent(ctx context.Context, n, clients int, op func(ctx context.Context, i int) error) *result {
	return e.measure(ctx, func(r *result) {
		var next atomic.Int64
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1) - 1)
					if i >= n || ctx.Err() != nil {
						return
					}
					t := time.Now()
					err := op(ctx, i)
					d := time.Since(t)
					mu.Lock()
					r.add(d, err)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	})
}

// watchLatency patches a label of n objects one after the other, each once its
// previous event came, and times each write's start to its event at a watch.
func (e *env) watchLatency(ctx context.Context, s *side, ns, prefix string, n, objects int) *result {
	return e.measure(ctx, func(r *result) {
		l, err := s.res(ns).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			r.add(0, err)
			return
		}
		w, err := s.res(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: l.GetResourceVersion()})
		if err != nil {
			r.add(0, err)
			return
		}
		defer w.Stop()
		for i := range n {
			v := fmt.Sprintf("w%d", i)
			t := time.Now()
			if err := s.labelPatch(ctx, ns, name(prefix, i%objects), v); err != nil {
				r.add(0, err)
				continue
			}
			deadline := time.After(30 * time.Second)
		wait:
			for {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						r.add(0, fmt.Errorf("watch ended"))
						return
					}
					if ev.Type != watch.Modified {
						continue
					}
					if u, ok := ev.Object.(*unstructured.Unstructured); ok && u.GetLabels()["bench-write"] == v {
						r.add(time.Since(t), nil)
						break wait
					}
				case <-deadline:
					r.add(0, fmt.Errorf("no event within 30 s"))
					break wait
				}
			}
		}
	})
}

// establishedTo counts the established TCP connections to port on loopback, as
// /proc/net/tcp lists them (each appears once with port as its local port).
func establishedTo(port int) int {
	n := 0
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 4 || fs[3] != "01" {
				continue
			}
			if _, p, ok := strings.Cut(fs[1], ":"); ok {
				if v, err := strconv.ParseInt(p, 16, 32); err == nil && int(v) == port {
					n++
				}
			}
		}
	}
	return n
}

// profiles takes CPU profiles of both API servers while op runs sequentially for d.
func (e *env) profiles(ctx context.Context, dir, label string, d time.Duration, op func(ctx context.Context, i int) error) error {
	ps, err := e.APIServerProfiles(d + 30*time.Second)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(ps))
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", p.Base, int(d.Seconds()))
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				errs[i] = err
				return
			}
			resp, err := p.Client.Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				errs[i] = fmt.Errorf("%s: %s", url, resp.Status)
				return
			}
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%s.pprof", label, p.Name)))
			if err != nil {
				errs[i] = err
				return
			}
			defer f.Close()
			_, errs[i] = io.Copy(f, resp.Body)
		}()
	}
	end := time.Now().Add(d)
	cpu0 := e.Snapshot()
	n := 0
	for i := 0; time.Now().Before(end) && ctx.Err() == nil; i++ {
		_ = op(ctx, i)
		n++
	}
	cpu := benchenv.CPUDelta(cpu0, e.Snapshot())
	wg.Wait()
	fmt.Fprintf(os.Stderr, "Profiled %s: %d sequential creates in %s; CPU ms per create: %s\n", label, n, d, perRequest(cpu, n))
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func perRequest(cpu map[string]float64, n int) string {
	var parts []string
	for k, v := range cpu {
		if n > 0 && v > 0 {
			parts = append(parts, fmt.Sprintf("%s %.2f", k, v*1000/float64(n)))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}
