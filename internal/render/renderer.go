package render

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"helm.sh/helm/v4/pkg/chart/loader/archive"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/hooks"
)

// Chart is a fetched chart, as internal/source's Fetch returns it: render loads and
// templates it, and fetches nothing.
type Chart struct {
	// What names the chart in messages ("NAME VERSION", or a Git folder, repository
	// and commit).
	What string
	// Digest identifies the chart (Inputs.ChartDigest, Result.ChartDigest).
	Digest string
	// Commit is the Git commit of a chart from Git; empty otherwise (Result.Commit).
	Commit string
	// Archive is the chart archive (.tgz), read when Files is nil.
	Archive []byte
	// Files reads the chart's files (the folder of a Git commit); nil: Archive.
	Files func() ([]*archive.BufferedFile, error)
}

// Request is one render of a Release.
type Request struct {
	// Release to render: spec.chart, spec.values, spec.valuesFrom, spec.targetNamespace
	// and mutations are read.
	Release *v1alpha1.Release
	// Chart is the Release's chart, fetched (internal/source).
	Chart Chart
	// Capabilities of the target cluster.
	Capabilities Capabilities
	// Values are the Release's values (MergeValues); nil: merged from spec.values
	// alone, with no reader of spec.valuesFrom.
	Values *Values
	// Revision is .Release.Revision of a render templated anew (0 counts as 1).
	Revision int64
	// IsUpgrade makes the templates see .Release.IsUpgrade, not .Release.IsInstall.
	IsUpgrade bool
	// Lookup answers the templates' lookup from the target cluster, for the target
	// namespace and cluster-scoped objects; nil: lookup finds nothing, as in
	// `helm template`. Prepared.Reuse reads again through it what an earlier render's
	// lookups read.
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
	// Reused: the result is an earlier render of the same inputs (Prepared.Reuse),
	// not templated anew.
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

// Prepared is a request whose inputs are known (Prepare): the caller looks an
// earlier render of Key up and reuses it (Reuse) or, when there is none to reuse,
// templates the chart (Render). Nothing of it is templated before Render.
type Prepared struct {
	// Key names the inputs, to find an earlier render of them.
	Key ReuseKey

	req  Request
	vals *Values
	in   Inputs
	what string
}

// Prepare names the inputs of req (Prepared.Key): the chart's digest, the values'
// digest, the mutations, the names and whether it is an upgrade. It reads nothing but
// req.Values, and merges spec.values alone when req.Values is nil. Errors are *Error,
// except a cancelled context.
func Prepare(ctx context.Context, req Request) (*Prepared, error) {
	rel := req.Release
	if rel == nil {
		return nil, errors.New("render: Request.Release is nil")
	}
	vals := req.Values
	if vals == nil {
		var err error
		if vals, err = MergeValues(ctx, rel, nil); err != nil {
			return nil, err
		}
	}
	p := &Prepared{req: req, vals: vals, what: releaseWhat(rel)}
	p.in = Inputs{
		ChartDigest: req.Chart.Digest, ValuesDigest: vals.Digest, Mutations: rel.Mutations,
		ReleaseName: rel.Name, Namespace: TargetNamespace(rel), IsUpgrade: req.IsUpgrade,
		Verify: rel.Spec.Chart.Verify,
	}
	key, err := reuseKey(p.in, req.Capabilities)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.what, err)
	}
	p.Key = key
	return p, nil
}

// Reuse returns prev, an earlier render of the inputs of p.Key, as the render of
// p — unless what its templates read of the target changed: the capabilities they
// read (a version that does not parse is changed: templating reports it) or what
// their lookups found (read again through Request.Lookup). Then it returns nil, and
// the chart is to be templated anew (Render).
func (p *Prepared) Reuse(ctx context.Context, prev *Result) (*Result, error) {
	changed, err := prev.Capabilities.Changed(p.req.Capabilities)
	if err != nil {
		changed = true
	}
	if !changed {
		if changed, err = lookupsChanged(ctx, p.req.Lookup, p.in.Namespace, prev.Lookups); err != nil {
			return nil, fmt.Errorf("%s: %w", p.what, err)
		}
	}
	if changed {
		return nil, nil
	}
	prev.Reused = true
	prev.ValuesDigest, prev.ChartDigest, prev.Commit = p.vals.Digest, p.req.Chart.Digest, p.req.Chart.Commit
	return prev, nil
}

// Render is Prepare then Prepared.Render: the chart templated anew.
func Render(ctx context.Context, req Request) (*Result, error) {
	p, err := Prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	return p.Render(ctx)
}

// Render loads the chart, renders it with the values for the target and returns the
// canonical render. Errors are *Error (read their reason with reasons.Of), except a
// cancelled context.
func (p *Prepared) Render(ctx context.Context) (*Result, error) {
	req, rel, what := p.req, p.req.Release, p.what
	chartName := req.Chart.What
	if chartName == "" {
		chartName = rel.Spec.Chart.Name
	}
	c, err := req.Chart.load(chartName)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	revision := max(req.Revision, 1)
	var look *lookups
	if req.Lookup != nil {
		look = newLookups(ctx, req.Lookup, p.in.Namespace)
	}
	files, reads, err := template(ctx, c, p.vals.merged, renderOptions{
		releaseName: rel.Name, namespace: p.in.Namespace, caps: req.Capabilities,
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
	res.ValuesDigest = p.vals.Digest
	res.ChartName = c.Metadata.Name
	res.ChartVersion = c.Metadata.Version
	res.ChartDigest = req.Chart.Digest
	res.Commit = req.Chart.Commit
	res.Inputs = p.Key.Inputs
	res.Revision = revision
	res.IsUpgrade = req.IsUpgrade
	return res, nil
}

// releaseWhat names a Release in errors.
func releaseWhat(rel *v1alpha1.Release) string {
	return fmt.Sprintf("Release %s/%s", rel.Namespace, rel.Name)
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
