package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	v1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/diff"
)

// Backend is what the UI asks of kubectl-convoy's client: the same requests and
// the same diff as the CLI's commands.
type Backend interface {
	// Sync POSTs releases/NAME/sync (?force=true, ?render=REF).
	Sync(ctx context.Context, ns, name string, opts v1.SyncOptions) (*v1.Release, error)
	// MergePatch sends a JSON merge patch to releases/NAME/SUBRESOURCE.
	MergePatch(ctx context.Context, ns, name, subresource string, patch []byte) (*v1.Release, error)
	// ClusterDiff is `kubectl convoy release diff NAME [--ref REF]`: the render's
	// ref and what its apply would change on the target cluster.
	ClusterDiff(ctx context.Context, ns, name, ref string) (string, []diff.Result, error)
	// RenderObjects are the objects a render's apply applies (diff.Applied).
	RenderObjects(ctx context.Context, ns, name, ref string) ([]*unstructured.Unstructured, error)
	// Promote POSTs releasesets/NAME/promote.
	Promote(ctx context.Context, ns, name string) (*v1.ReleaseSet, error)
}

// Options configure a Server.
type Options struct {
	// Config reaches the host cluster as the user (their kubeconfig).
	Config *rest.Config
	// Backend sends the actions and computes diffs.
	Backend Backend
	// Namespace limits the UI to one namespace; empty: every namespace when the
	// user may list Releases in all, else DefaultNamespace.
	Namespace string
	// DefaultNamespace is the kubeconfig context's namespace.
	DefaultNamespace string
	// Context names the kubeconfig context, for the page's header.
	Context string
}

// Server serves the UI. Make it with New; Handler serves it.
type Server struct {
	opts   Options
	kube   kubernetes.Interface
	hub    *hub
	scope  watchScope
	access *accessCache
}

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(v1.AddToScheme(s))
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

// New decides what the user may watch, starts the watches and waits until they
// have listed once. They stop when ctx ends.
func New(ctx context.Context, opts Options) (*Server, error) {
	if opts.Config == nil || opts.Backend == nil {
		return nil, errors.New("ui: Options.Config and Options.Backend are required")
	}
	kube, err := kubernetes.NewForConfig(opts.Config)
	if err != nil {
		return nil, fmt.Errorf("creating a client of the cluster: %w", err)
	}
	c := rest.CopyConfig(opts.Config)
	c.GroupVersion = &v1.SchemeGroupVersion
	c.APIPath = "/apis"
	c.NegotiatedSerializer = serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(scheme)}
	c.ContentType = runtime.ContentTypeJSON
	convoy, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("creating a client of %s: %w", v1.GroupName, err)
	}
	s := &Server{opts: opts, kube: kube}
	s.access = &accessCache{kube: kube, ttl: 10 * time.Second, entries: map[accessKey]accessEntry{}}
	if s.scope, err = s.decideScope(ctx); err != nil {
		return nil, err
	}
	if s.hub, err = newHub(opts.Config, convoy, s.scope); err != nil {
		return nil, err
	}
	if err := s.hub.run(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// decideScope: the namespace asked for; else every namespace when the user may
// list and watch Releases cluster-wide; else each namespace (of those the user
// may list) where they may; else the kubeconfig's namespace. In each, the kinds
// besides Releases that the user may list and watch.
func (s *Server) decideScope(ctx context.Context) (watchScope, error) {
	var sc watchScope
	var names []string
	served := s.servedResources()
	sets := served[v1.ResourceReleaseSets]
	switch {
	case s.opts.Namespace != "":
		names = []string{s.opts.Namespace}
	default:
		all, err := s.allowedAll(ctx, "", v1.ResourceReleases, "list", "watch")
		if err != nil {
			return sc, err
		}
		if all {
			names = []string{""}
			break
		}
		if names, err = s.namespacesWithReleases(ctx); err != nil {
			return sc, err
		}
		if len(names) == 0 {
			ns := s.opts.DefaultNamespace
			if ns == "" {
				ns = "default"
			}
			names = []string{ns}
		}
	}
	for _, ns := range names {
		ok, err := s.allowedAll(ctx, ns, v1.ResourceReleases, "list", "watch")
		if err != nil {
			return sc, err
		}
		if !ok {
			where := "in namespace " + ns
			if ns == "" {
				where = "in all namespaces"
			}
			return sc, fmt.Errorf("you may not list and watch Releases %s; ask for the convoy-view ClusterRole (or list and watch on releases.%s), or pick a namespace with -n", where, v1.GroupName)
		}
		n := nsScope{name: ns}
		if n.inventories, err = s.allowedAll(ctx, ns, v1.ResourceReleaseInventories, "list", "watch"); err != nil {
			return sc, err
		}
		if n.renders, err = s.allowedAll(ctx, ns, v1.ResourceRenders, "list", "watch"); err != nil {
			return sc, err
		}
		if n.events, err = s.allowedCore(ctx, ns, "events", "list", "watch"); err != nil {
			return sc, err
		}
		if sets {
			if n.releaseSets, err = s.allowedAll(ctx, ns, v1.ResourceReleaseSets, "list", "watch"); err != nil {
				return sc, err
			}
		}
		if served[v1.ResourceAlerts] {
			if n.alerts, err = s.allowedAll(ctx, ns, v1.ResourceAlerts, "list", "watch"); err != nil {
				return sc, err
			}
		}
		if served[v1.ResourceReceivers] {
			if n.receivers, err = s.allowedAll(ctx, ns, v1.ResourceReceivers, "list", "watch"); err != nil {
				return sc, err
			}
		}
		sc.namespaces = append(sc.namespaces, n)
	}
	var err error
	sc.clusters, err = s.allowedAll(ctx, "", v1.ResourceClusters, "list", "watch")
	return sc, err
}

// servedResources asks discovery which resources convoy apiserver serves: a convoy
// older than ReleaseSets (or Alerts, Receivers) does not serve them, and the UI then
// shows no fleet view (or no notifications).
func (s *Server) servedResources() map[string]bool {
	out := map[string]bool{}
	list, err := s.kube.Discovery().ServerResourcesForGroupVersion(v1.SchemeGroupVersion.String())
	if err != nil || list == nil {
		return out
	}
	for _, r := range list.APIResources {
		out[r.Name] = true
	}
	return out
}

// namespacesWithReleases are the namespaces where the user may list and watch
// Releases, found through a list of namespaces; none when the user may not list
// namespaces.
func (s *Server) namespacesWithReleases(ctx context.Context) ([]string, error) {
	list, err := s.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing namespaces: %w", err)
	}
	var out []string
	for _, ns := range list.Items {
		ok, err := s.allowedAll(ctx, ns.Name, v1.ResourceReleases, "list", "watch")
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, ns.Name)
		}
	}
	return out, nil
}

func (s *Server) allowedCore(ctx context.Context, ns, resource string, verbs ...string) (bool, error) {
	for _, verb := range verbs {
		ok, err := s.access.allowed(ctx, accessKey{core: true, namespace: ns, resource: resource, verb: verb})
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func (s *Server) allowedAll(ctx context.Context, ns, resource string, verbs ...string) (bool, error) {
	for _, verb := range verbs {
		ok, err := s.access.allowed(ctx, accessKey{namespace: ns, resource: resource, verb: verb})
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// Handler serves the page, its assets and its API. Only requests to the
// loopback address it was opened on are answered, and a write must carry the
// header X-Convoy-UI (which no other site's page can add without CORS, which
// the server never allows).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /", assets())
	mux.HandleFunc("GET /api/info", s.info)
	mux.HandleFunc("GET /api/stream", s.stream)
	mux.HandleFunc("GET /api/access", s.accessHandler)
	mux.HandleFunc("GET /api/releases/{ns}/{name}/diff", s.clusterDiff)
	mux.HandleFunc("GET /api/releases/{ns}/{name}/renderdiff", s.renderDiff)
	mux.HandleFunc("POST /api/releases/{ns}/{name}/sync", s.sync)
	mux.HandleFunc("POST /api/releases/{ns}/{name}/pin", s.pin)
	mux.HandleFunc("POST /api/releases/{ns}/{name}/unpin", s.unpin)
	mux.HandleFunc("POST /api/releasesets/{ns}/{name}/promote", s.promote)
	return guard(mux)
}

// guard refuses requests for another host (DNS rebinding) and writes without
// the X-Convoy-UI header or from another origin (cross-site requests).
func guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if host != "127.0.0.1" && host != "localhost" && host != "::1" {
			writeError(w, http.StatusForbidden, fmt.Errorf("kubectl convoy ui answers only on loopback, not for host %q", r.Host))
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if r.Header.Get("X-Convoy-UI") != "1" {
				writeError(w, http.StatusForbidden, errors.New("a write needs the header X-Convoy-UI: 1 (the page sends it)"))
				return
			}
			if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
				writeError(w, http.StatusForbidden, fmt.Errorf("a write from origin %q is refused", o))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// info tells the page what it watches.
func (s *Server) info(w http.ResponseWriter, _ *http.Request) {
	type namespace struct {
		Name        string `json:"name"`
		Inventories bool   `json:"inventories"`
		Renders     bool   `json:"renders"`
		Events      bool   `json:"events"`
		ReleaseSets bool   `json:"releaseSets"`
		Alerts      bool   `json:"alerts"`
		Receivers   bool   `json:"receivers"`
	}
	var ns []namespace
	for _, n := range s.scope.namespaces {
		ns = append(ns, namespace{Name: n.name, Inventories: n.inventories, Renders: n.renders, Events: n.events,
			ReleaseSets: n.releaseSets, Alerts: n.alerts, Receivers: n.receivers})
	}
	all := len(ns) == 1 && ns[0].Name == ""
	writeJSON(w, map[string]any{
		"allNamespaces": all, "namespaces": ns, "clusters": s.scope.clusters,
		"context": s.opts.Context, "host": s.opts.Config.Host,
	})
}

// stream is the Server-Sent Events stream: every object, a "synced" message,
// then each change, as `data: <Message JSON>` lines.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, errors.New("streaming is not supported"))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	ch, cancel := s.hub.subscribe()
	defer cancel()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		case m, ok := <-ch:
			if !ok {
				return
			}
			b, _ := json.Marshal(m)
			if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
				return
			}
			// Send what is queued together: a snapshot of 1,000 Releases is one write.
			for n := len(ch); n > 0; n-- {
				m, ok := <-ch
				if !ok {
					break
				}
				b, _ := json.Marshal(m)
				fmt.Fprintf(w, "data: %s\n\n", b)
			}
			flusher.Flush()
		}
	}
}

// Access is what the user may do to the Releases and ReleaseSets of a namespace.
type Access struct {
	Sync    bool `json:"sync"`
	Pin     bool `json:"pin"`
	Diff    bool `json:"diff"`
	Promote bool `json:"promote"`
}

func (s *Server) accessOf(ctx context.Context, ns string) (Access, error) {
	var a Access
	var err error
	if a.Sync, err = s.access.allowed(ctx, accessKey{namespace: ns, resource: v1.ResourceReleases, subresource: v1.SubresourceSync, verb: "create"}); err != nil {
		return a, err
	}
	if a.Pin, err = s.access.allowed(ctx, accessKey{namespace: ns, resource: v1.ResourceReleases, subresource: v1.SubresourcePin, verb: "patch"}); err != nil {
		return a, err
	}
	if a.Diff, err = s.access.allowed(ctx, accessKey{namespace: ns, resource: v1.ResourceRenders, verb: "get"}); err != nil {
		return a, err
	}
	a.Promote, err = s.access.allowed(ctx, accessKey{namespace: ns, resource: v1.ResourceReleaseSets, subresource: v1.SubresourcePromote, verb: "create"})
	return a, err
}

func (s *Server) accessHandler(w http.ResponseWriter, r *http.Request) {
	ns := r.URL.Query().Get("namespace")
	if ns == "" {
		writeError(w, http.StatusBadRequest, errors.New("/api/access needs ?namespace=NAMESPACE"))
		return
	}
	a, err := s.accessOf(r.Context(), ns)
	if err != nil {
		writeError(w, http.StatusBadGateway, err)
		return
	}
	writeJSON(w, a)
}

// DiffObject is one object of a diff, for the page.
type DiffObject struct {
	Object  v1.ObjectReference `json:"object"`
	Name    string             `json:"name"`
	Action  diff.Action        `json:"action"`
	Fields  []string           `json:"fields,omitempty"`
	Unified string             `json:"unified,omitempty"`
}

// DiffResponse is a diff for the page: the objects that change, and how many
// are unchanged.
type DiffResponse struct {
	From      string       `json:"from"`
	To        string       `json:"to"`
	Objects   []DiffObject `json:"objects"`
	Unchanged int          `json:"unchanged"`
}

func response(from, to string, results []diff.Result) DiffResponse {
	out := DiffResponse{From: from, To: to, Objects: []DiffObject{}}
	for _, r := range results {
		if r.Action == diff.Unchanged {
			out.Unchanged++
			continue
		}
		name := diff.Describe(r.Object)
		out.Objects = append(out.Objects, DiffObject{Object: r.Object, Name: name, Action: r.Action, Fields: r.Fields,
			Unified: diff.UnifiedLabelled(from, to, name, r)})
	}
	return out
}

// clusterDiff is `kubectl convoy release diff`: ?ref=REF or the current render.
func (s *Server) clusterDiff(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	ref, results, err := s.opts.Backend.ClusterDiff(r.Context(), ns, name, r.URL.Query().Get("ref"))
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	resp := response("live", "render", results)
	resp.To = ref
	writeJSON(w, resp)
}

// renderDiff compares two renders of a Release: ?from=REF&to=REF.
func (s *Server) renderDiff(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	from, to := r.URL.Query().Get("from"), r.URL.Query().Get("to")
	if from == "" || to == "" {
		writeError(w, http.StatusBadRequest, errors.New("renderdiff needs ?from=REF&to=REF"))
		return
	}
	var objs [2][]*unstructured.Unstructured
	for i, ref := range []string{from, to} {
		var err error
		if objs[i], err = s.opts.Backend.RenderObjects(r.Context(), ns, name, ref); err != nil {
			writeError(w, statusOf(err), err)
			return
		}
	}
	results, err := diff.Between(objs[0], objs[1])
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, response(v1.RenderRef(from).Short(), v1.RenderRef(to).Short(), results))
}

// permitted checks an action on a Release with a SelfSubjectAccessReview before
// it is sent, so that the UI never sends a request the user may not make.
func (s *Server) permitted(w http.ResponseWriter, r *http.Request, ns, sub, verb string) bool {
	return s.permittedOn(w, r, ns, v1.ResourceReleases, sub, verb)
}

// permittedOn is permitted for any resource of convoy's group.
func (s *Server) permittedOn(w http.ResponseWriter, r *http.Request, ns, resource, sub, verb string) bool {
	ok, err := s.access.allowed(r.Context(), accessKey{namespace: ns, resource: resource, subresource: sub, verb: verb})
	if err != nil {
		writeError(w, http.StatusBadGateway, err)
		return false
	}
	if !ok {
		writeError(w, http.StatusForbidden, fmt.Errorf("you may not %s %s/%s in namespace %s", verb, resource, sub, ns))
		return false
	}
	return true
}

// promote is `kubectl convoy releaseset promote`: it answers with the Releases whose
// removal it acknowledged (acknowledged) when the set held a mass removal, else with
// the stage approved (the last approval of the current revision).
func (s *Server) promote(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if !s.permittedOn(w, r, ns, v1.ResourceReleaseSets, v1.SubresourcePromote, "create") {
		return
	}
	set, err := s.opts.Backend.Promote(r.Context(), ns, name)
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	out := map[string]any{"revision": set.Status.Revision}
	if ack := set.RemovalAcknowledgement; ack != nil && len(set.Status.HeldRemovals) > 0 {
		// It acknowledged the held mass removal (and approved nothing).
		out["acknowledged"], out["acknowledgedBy"] = ack.Releases, ack.AcknowledgedBy
		writeJSON(w, out)
		return
	}
	for i := len(set.Approvals) - 1; i >= 0; i-- {
		if a := set.Approvals[i]; a.Revision == set.Status.Revision {
			out["stage"], out["approvedBy"] = a.Stage, a.ApprovedBy
			break
		}
	}
	writeJSON(w, out)
}

func (s *Server) sync(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if !s.permitted(w, r, ns, v1.SubresourceSync, "create") {
		return
	}
	q := r.URL.Query()
	opts := v1.SyncOptions{Force: q.Get("force") == "true", Render: q.Get("render")}
	if p := v1.RenderRef(opts.Render).ShortProblem(); opts.Render != "" && p != "" {
		writeError(w, http.StatusBadRequest, fmt.Errorf("sync: render must be a render ref, sha256: and 64 hex digits or its first 10, got %q: %s", opts.Render, p))
		return
	}
	rel, err := s.opts.Backend.Sync(r.Context(), ns, name, opts)
	if apierrors.IsConflict(err) && opts.Render != "" {
		// The render the page showed is no longer the Release's: nothing was
		// requested; the page draws the new diff and asks again.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"error": fmt.Sprintf("The render changed since this diff was drawn: the Sync approved render %s, which is no longer the Release's; "+
				"nothing was requested. Review the new diff and approve again. (%s)", v1.RenderRef(opts.Render).Short(), apiMessage(err)),
			"renderChanged": true,
		})
		return
	}
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, map[string]string{
		"requestedAt":      rel.Annotations[v1.AnnotationSyncRequestedAt],
		"forceRequestedAt": rel.Annotations[v1.AnnotationSyncForceRequestedAt],
		"render":           rel.Annotations[v1.AnnotationSyncRequestedRender],
	})
}

// apiMessage is the message of an API error (its Status), else the error's text.
func apiMessage(err error) string {
	var s apierrors.APIStatus
	if errors.As(err, &s) && s.Status().Message != "" {
		return s.Status().Message
	}
	return err.Error()
}

func (s *Server) pin(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if !s.permitted(w, r, ns, v1.SubresourcePin, "patch") {
		return
	}
	var body struct {
		RenderRef string `json:"renderRef"`
		Reason    string `json:"reason"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("pin: the body must be JSON {\"renderRef\": \"sha256:…\", \"reason\": \"…\"}: %w", err))
		return
	}
	pin := map[string]any{"renderRef": nil, "reason": nil}
	if body.RenderRef != "" {
		pin["renderRef"] = body.RenderRef
	}
	if body.Reason != "" {
		pin["reason"] = body.Reason
	}
	patch, _ := json.Marshal(map[string]any{"pin": pin})
	rel, err := s.opts.Backend.MergePatch(r.Context(), ns, name, v1.SubresourcePin, patch)
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, rel.Pin)
}

func (s *Server) unpin(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if !s.permitted(w, r, ns, v1.SubresourcePin, "patch") {
		return
	}
	if _, err := s.opts.Backend.MergePatch(r.Context(), ns, name, v1.SubresourcePin, []byte(`{"pin":null}`)); err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, map[string]any{"pin": nil})
}

func statusOf(err error) int {
	var s apierrors.APIStatus
	if errors.As(err, &s) && s.Status().Code >= 400 {
		return int(s.Status().Code)
	}
	return http.StatusBadGateway
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

// accessCache remembers SelfSubjectAccessReview answers for a short time.
type accessCache struct {
	kube    kubernetes.Interface
	ttl     time.Duration
	mu      sync.Mutex
	entries map[accessKey]accessEntry
}

type accessKey struct {
	core                                   bool // the core API group, else convoy's
	namespace, resource, subresource, verb string
}

type accessEntry struct {
	allowed bool
	at      time.Time
}

func (c *accessCache) allowed(ctx context.Context, k accessKey) (bool, error) {
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	if ok && time.Since(e.at) < c.ttl {
		return e.allowed, nil
	}
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: k.namespace, Verb: k.verb, Group: v1.GroupName, Resource: k.resource, Subresource: k.subresource,
		},
	}}
	if k.core {
		review.Spec.ResourceAttributes.Group = ""
	}
	out, err := c.kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("asking whether you may %s %s: %w", k.verb, k.resource, err)
	}
	c.mu.Lock()
	c.entries[k] = accessEntry{allowed: out.Status.Allowed, at: time.Now()}
	c.mu.Unlock()
	return out.Status.Allowed, nil
}
