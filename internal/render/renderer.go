package render

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/clock"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
)

// DefaultIndexTTL is how long a repository index (or an OCI tag list and tag
// resolution) is used before it is read again.
const DefaultIndexTTL = time.Minute

// DefaultHTTPTimeout bounds every request to a chart source.
const DefaultHTTPTimeout = 2 * time.Minute

// Options configure a Renderer.
type Options struct {
	// CacheDir holds the chart archives. Required.
	CacheDir string
	// Clock decides when cached indexes expire. Default: the real clock.
	Clock clock.PassiveClock
	// HTTPClient reaches chart repositories and registries. Default: a client with
	// DefaultHTTPTimeout.
	HTTPClient *http.Client
	// IndexTTL is how long an index, a tag list or a tag's digest is cached in
	// memory. Default DefaultIndexTTL.
	IndexTTL time.Duration
	// PlainHTTPHosts are OCI registries (host or host:port) reached over plain HTTP.
	// Loopback registries (localhost, 127.0.0.0/8, ::1) always are.
	PlainHTTPHosts []string
	// GitCacheBytes bounds the Git commits kept on disk (CacheDir/git). Default
	// DefaultGitCacheBytes.
	GitCacheBytes int64
	// AllowGitFileURLs lets spec.chart.git.url be a file:// URL: a repository on the
	// controller's disk (--allow-git-file-urls).
	AllowGitFileURLs bool
}

// Renderer renders Releases. It is safe for concurrent use; one Renderer per
// process shares its caches between all Releases.
type Renderer struct {
	opts     Options
	archives archiveStore
	indexes  *ttlCache[*repo.IndexFile]
	tags     *ttlCache[[]string]
	digests  *ttlCache[string]
	group    singleflight.Group

	gitListings gitListings
	gitVerified gitVerified
	commits     *commitStore

	clientsMu  sync.Mutex
	clients    map[string]*http.Client     // by CA fingerprint
	registries map[string]*registry.Client // by host, plain HTTP and credentials
}

// New returns a Renderer.
func New(opts Options) (*Renderer, error) {
	if opts.CacheDir == "" {
		return nil, errors.New("render: Options.CacheDir is required")
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	if opts.IndexTTL <= 0 {
		opts.IndexTTL = DefaultIndexTTL
	}
	return &Renderer{
		opts:       opts,
		archives:   archiveStore{dir: opts.CacheDir + "/charts"},
		indexes:    newTTLCache[*repo.IndexFile]("index", opts.Clock, opts.IndexTTL),
		tags:       newTTLCache[[]string]("tags", opts.Clock, opts.IndexTTL),
		digests:    newTTLCache[string]("resolve", opts.Clock, opts.IndexTTL),
		clients:    map[string]*http.Client{},
		registries: map[string]*registry.Client{},
		commits:    newCommitStore(opts.CacheDir+"/git", opts.GitCacheBytes, opts.Clock),
	}, nil
}

// Request is one render of a Release.
type Request struct {
	// Release to render: spec.chart, spec.values, spec.valuesFrom, spec.targetNamespace
	// and mutations are read.
	Release *v1alpha1.Release
	// Capabilities of the target cluster.
	Capabilities Capabilities
	// Values reads the ConfigMaps and Secrets of spec.valuesFrom. May be nil when the
	// Release has no valuesFrom.
	Values ValuesReader
	// Credentials for spec.chart, read from spec.chart.secretRef; nil: anonymous.
	Credentials *Credentials
	// Revision is .Release.Revision of a render templated anew (0 counts as 1).
	Revision int64
	// IsUpgrade makes the templates see .Release.IsUpgrade, not .Release.IsInstall.
	IsUpgrade bool
	// Reuse, when set, is asked for an earlier render of the same inputs before the
	// chart is templated; the render it returns (nil: none) is the result, unless
	// what its templates read of the target (lookups, capabilities) has changed.
	Reuse func(ctx context.Context, key ReuseKey) (*Result, error)
	// Lookup answers the templates' lookup from the target cluster, for the target
	// namespace and cluster-scoped objects; nil: lookup finds nothing, as in
	// `helm template`.
	Lookup Lookup
}

// ReuseKey names the inputs of a render, to find an earlier render of them.
type ReuseKey struct {
	// Inputs is the digest of the inputs as requested (Inputs.Digest).
	Inputs string
	// InstallInputs is, for an upgrade, the digest of the same inputs rendered as an
	// install: the render that installed a Release may stay its render until an
	// input changes, although the Release is now installed.
	InstallInputs string

	// in and caps are the inputs and capabilities of the request, for Legacy.
	in   Inputs
	caps Capabilities
}

// Legacy is the key of the same inputs in the digests of a convoy that did not
// record what the templates read of the capabilities (inputs format 1: with the
// target's Kubernetes version and whole list of API versions), to find the Render
// such a convoy made, and the reads under which that Render stays reusable: the
// same Kubernetes version and list of API versions. Reusing it so spares every
// Release a new render (and its upgrade hooks) at the upgrade of convoy.
func (k ReuseKey) Legacy() (ReuseKey, CapabilityReads, error) {
	var legacy ReuseKey
	var err error
	if legacy.Inputs, err = k.in.legacyDigest(k.caps); err != nil {
		return legacy, CapabilityReads{}, err
	}
	if k.in.IsUpgrade {
		install := k.in
		install.IsUpgrade = false
		if legacy.InstallInputs, err = install.legacyDigest(k.caps); err != nil {
			return legacy, CapabilityReads{}, err
		}
	}
	reads, err := legacyCapabilityReads(k.caps)
	return legacy, reads, err
}

// Result is a render.
type Result struct {
	// Ref is the render ref: sha256:<hex> of Canonical.
	Ref string
	// ValuesDigest is sha256:<hex> of the merged values' canonical JSON.
	ValuesDigest string
	// ChartName and ChartVersion are the chart rendered.
	ChartName    string
	ChartVersion string
	// ChartDigest identifies the chart archive: its sha256 (HTTP repositories), its
	// OCI manifest digest, or for a chart from Git a digest of the commit and path.
	ChartDigest string
	// Commit is the Git commit of a chart from Git; empty otherwise.
	Commit string
	// Inputs is the digest of the inputs the render was templated from
	// (Inputs.Digest).
	Inputs string
	// Revision is the .Release.Revision the templates saw; IsUpgrade whether they saw
	// .Release.IsUpgrade (else .Release.IsInstall).
	Revision  int64
	IsUpgrade bool
	// Reused: the result is an earlier render of the same inputs (Request.Reuse), not
	// templated by this call.
	Reused bool
	// Lookups are the reads of the templates' lookup, sorted; the render stays
	// reusable while each finds the same.
	Lookups []LookupRead
	// Capabilities are what the templates read of the target's capabilities; the
	// render stays reusable while the target answers the same.
	Capabilities CapabilityReads
	// Objects to apply, in canonical order (wave, Helm's kind order with CRDs first,
	// namespace, name).
	Objects []Object
	// Waves are the distinct waves of Objects, ascending.
	Waves []int32
	// Hooks are the chart's Helm hooks of the events convoy runs (install, upgrade,
	// delete), Jobs and other objects, by weight, kind and name.
	Hooks []hooks.Chart
	// Warnings say what the render left out or found odd (hooks convoy does not run,
	// mutations that select nothing), for Warning events.
	Warnings []string
	// Canonical is the canonical YAML stream of Objects then Hooks.
	Canonical []byte
}

// TargetNamespace is where a Release's namespaced objects go by default.
func TargetNamespace(rel *v1alpha1.Release) string {
	if rel.Spec.TargetNamespace != "" {
		return rel.Spec.TargetNamespace
	}
	return rel.Namespace
}

// Render fetches the Release's chart, merges its values, renders it for the target
// and returns the canonical render. When Request.Reuse finds an earlier render of the
// same inputs, that is the result and the chart is not templated. Errors are *Error
// (read their reason with reasons.Of), except a cancelled context.
func (r *Renderer) Render(ctx context.Context, req Request) (*Result, error) {
	rel := req.Release
	if rel == nil {
		return nil, errors.New("render: Request.Release is nil")
	}
	what := fmt.Sprintf("Release %s/%s", rel.Namespace, rel.Name)
	vals, err := mergeValues(ctx, rel, req.Values)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	digest, err := valuesDigest(vals)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var arc *chartArchive
	if g := rel.Spec.Chart.Git; g != nil {
		arc, err = r.fetchGit(ctx, g, r.listingMaxAge(rel), req.Credentials)
	} else {
		arc, err = r.fetch(ctx, rel.Spec.Chart, req.Credentials)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	in := Inputs{
		ChartDigest: arc.digest, ValuesDigest: digest, Mutations: rel.Mutations,
		ReleaseName: rel.Name, Namespace: TargetNamespace(rel), IsUpgrade: req.IsUpgrade,
	}
	key, err := reuseKey(in, req.Capabilities)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if req.Reuse != nil {
		prev, err := req.Reuse(ctx, key)
		if err != nil {
			return nil, err
		}
		var changed bool
		if prev != nil {
			// A version that does not parse is changed: templating reports it.
			if changed, err = prev.Capabilities.Changed(req.Capabilities); err != nil {
				changed = true
			}
		}
		if prev != nil && !changed {
			if changed, err = lookupsChanged(ctx, req.Lookup, in.Namespace, prev.Lookups); err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
		}
		if prev != nil && !changed {
			prev.Reused = true
			prev.ValuesDigest, prev.ChartDigest, prev.Commit = digest, arc.digest, arc.commit
			return prev, nil
		}
	}

	chartName := chartWhat(rel.Spec.Chart.Name, arc.version)
	if arc.what != "" {
		chartName = arc.what
	}
	c, err := arc.chart(chartName)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	revision := max(req.Revision, 1)
	var look *lookups
	if req.Lookup != nil {
		look = newLookups(ctx, req.Lookup, in.Namespace)
	}
	files, reads, err := template(ctx, c, vals, renderOptions{
		releaseName: rel.Name, namespace: in.Namespace, caps: req.Capabilities,
		revision: revision, isUpgrade: req.IsUpgrade, lookups: look,
	}, chartName)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	res, err := assemble(rel, req.Capabilities, files)
	if err != nil {
		return nil, fmt.Errorf("%s: chart %s: %w", what, chartName, err)
	}
	if look != nil {
		var warnings []string
		res.Lookups, warnings = look.recorded()
		res.Warnings = append(res.Warnings, warnings...)
		slices.Sort(res.Warnings)
		res.Warnings = slices.Compact(res.Warnings)
	}
	res.Capabilities = reads
	res.ValuesDigest = digest
	res.ChartName = c.Metadata.Name
	res.ChartVersion = c.Metadata.Version
	res.ChartDigest = arc.digest
	res.Commit = arc.commit
	res.Inputs = key.Inputs
	res.Revision = revision
	res.IsUpgrade = req.IsUpgrade
	return res, nil
}

// reuseKey is the ReuseKey of in, rendered for caps.
func reuseKey(in Inputs, caps Capabilities) (ReuseKey, error) {
	key := ReuseKey{in: in, caps: caps}
	var err error
	if key.Inputs, err = in.Digest(); err != nil {
		return key, err
	}
	if in.IsUpgrade {
		in.IsUpgrade = false
		if key.InstallInputs, err = in.Digest(); err != nil {
			return key, err
		}
	}
	return key, nil
}

// assemble turns rendered files into the canonical render: hooks sorted out,
// namespaces and labels set, mutations applied, waves decided, all in canonical
// order with the ref.
func assemble(rel *v1alpha1.Release, caps Capabilities, files []renderedFile) (*Result, error) {
	res := &Result{}
	var all []*unstructured.Unstructured
	for _, f := range files {
		us, err := decodeManifests(f.name, f.content)
		if err != nil {
			return nil, err
		}
		all = append(all, us...)
	}
	items, warnings, err := sortOutHooks(all)
	if err != nil {
		return nil, err
	}
	res.Warnings = append(res.Warnings, warnings...)

	sc := newScopes(caps, all)
	targetNS := TargetNamespace(rel)
	us := make([]*unstructured.Unstructured, 0, len(items))
	for _, it := range items {
		sc.setNamespace(it.u, targetNS)
		setLabels(it.u, rel)
		us = append(us, it.u)
	}
	if warnings, err = applyMutations(us, rel.Mutations); err != nil {
		return nil, err
	}
	res.Warnings = append(res.Warnings, warnings...)

	objs, crds, chartHooks, err := collect(items, func(u *unstructured.Unstructured) {
		sc.setNamespace(u, targetNS) // a mutation may have changed it
		setLabels(u, rel)            // nor may a mutation take the labels away
	})
	if err != nil {
		return nil, err
	}
	crdsToFirstWave(objs, crds)
	res.Hooks = chartHooks
	canonical, err := canonicalize(objs, res.Hooks)
	if err != nil {
		return nil, err
	}
	slices.Sort(res.Warnings) // templates come out in map order
	res.Objects = objs
	res.Waves = wavesOf(objs)
	res.Canonical = canonical
	res.Ref = refOf(canonical)
	return res, nil
}

// renderedItem is one object of a render: a hook of the chart, or an object to apply.
type renderedItem struct {
	u     *unstructured.Unstructured
	crd   bool // CRDs go to the render's first wave
	hook  bool
	chart hooks.Chart
}

// sortOutHooks tells the chart's hooks that convoy runs from the objects to apply, and
// leaves out, with a warning, the hooks it does not run.
func sortOutHooks(all []*unstructured.Unstructured) ([]renderedItem, []string, error) {
	var items []renderedItem
	var warnings []string
	for _, u := range all {
		h, isHook, w, err := parseHook(u)
		if err != nil {
			return nil, nil, err
		}
		warnings = append(warnings, w...)
		switch {
		case isHook:
			items = append(items, renderedItem{u: u, hook: true, chart: h})
		case u.GetAnnotations()[hooks.Annotation] != "":
			continue // a hook convoy does not run: left out, with a warning
		default:
			items = append(items, renderedItem{u: u, crd: isCRD(u)})
		}
	}
	return items, warnings, nil
}

// collect checks the items once mutated (identity, no object twice, hook Jobs of
// unique names), item by item, calling reset on each once its identity is checked,
// and returns the objects to apply with their waves, whether each is a CRD (parallel
// to objs), and the chart's hooks.
func collect(items []renderedItem, reset func(*unstructured.Unstructured)) (objs []Object, crds []bool, chartHooks []hooks.Chart, err error) {
	type identity struct {
		group, kind, namespace, name string
	}
	seen := map[identity]bool{}
	hookJobs := map[string]bool{}
	for _, it := range items {
		u := it.u
		if err := checkIdentity(u); err != nil {
			return nil, nil, nil, err
		}
		reset(u)
		if it.hook {
			if hooks.IsJob(u) {
				if hookJobs[u.GetName()] {
					return nil, nil, nil, unappliable("two hook Jobs are named %q; hook names must be unique", u.GetName())
				}
				hookJobs[u.GetName()] = true
			}
			chartHooks = append(chartHooks, it.chart)
			continue
		}
		gvk := u.GroupVersionKind()
		id := identity{gvk.Group, gvk.Kind, u.GetNamespace(), u.GetName()}
		if seen[id] {
			return nil, nil, nil, unappliable("%s appears twice in the render", describe(u))
		}
		seen[id] = true
		w, err := WaveOf(u)
		if err != nil {
			return nil, nil, nil, err
		}
		objs = append(objs, Object{Unstructured: u, Wave: w})
		crds = append(crds, it.crd)
	}
	return objs, crds, chartHooks, nil
}

// crdsToFirstWave moves the CRDs (crds, parallel to objs) to the render's first wave:
// the lowest wave of the other objects (of their own, when there are no others).
func crdsToFirstWave(objs []Object, crds []bool) {
	var first, firstMoved *int32
	for i, o := range objs {
		w := o.Wave
		if !crds[i] && (first == nil || w < *first) {
			first = &w
		}
		if crds[i] && (firstMoved == nil || w < *firstMoved) {
			firstMoved = &w
		}
	}
	if first == nil {
		first = firstMoved
	}
	for i, move := range crds {
		if move {
			objs[i].Wave = *first
			setWave(objs[i].Unstructured, *first)
		}
	}
}
