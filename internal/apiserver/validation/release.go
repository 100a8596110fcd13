package validation

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

var (
	specPath      = field.NewPath("spec")
	mutationsPath = field.NewPath("mutations")
	lifecyclePath = field.NewPath("lifecycle")
	pinPath       = field.NewPath("pin")

	failureActions  = []string{string(convoyv1alpha1.FailureActionRollback), string(convoyv1alpha1.FailureActionHalt)}
	hookPhases      = []string{string(convoyv1alpha1.HookPreApply), string(convoyv1alpha1.HookPostApply)}
	valuesKinds     = []string{string(convoyv1alpha1.ValuesSourceConfigMap), string(convoyv1alpha1.ValuesSourceSecret)}
	deletionPolicys = []string{string(convoyv1alpha1.DeletionPolicyDelete), string(convoyv1alpha1.DeletionPolicyOrphan)}
	jsonPatchOps    = []string{"add", "remove", "replace", "move", "copy", "test"}
)

// ReleaseOptions are what the operator allows beyond the defaults.
type ReleaseOptions struct {
	// AllowGitFileURLs accepts file:// URLs in spec.chart.git.url: a repository on the
	// controller's own disk (--allow-git-file-urls).
	AllowGitFileURLs bool
}

// Release validates a Release as a whole: metadata, the sync annotations, spec,
// mutations, lifecycle and pin.
func Release(r *convoyv1alpha1.Release, opts ReleaseOptions) field.ErrorList {
	errs := ObjectMeta(&r.ObjectMeta, true)
	errs = append(errs, ReleaseContent(r, opts)...)
	return errs
}

// ReleaseUpdate validates an updated Release.
func ReleaseUpdate(r, old *convoyv1alpha1.Release, opts ReleaseOptions) field.ErrorList {
	errs := ObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, ReleaseContent(r, opts)...)
	return errs
}

// ReleaseContent validates everything of a Release but the generic metadata.
func ReleaseContent(r *convoyv1alpha1.Release, opts ReleaseOptions) field.ErrorList {
	errs := SyncAnnotations(r.Annotations)
	errs = append(errs, ReleaseSpec(&r.Spec, specPath, opts)...)
	errs = append(errs, Mutations(r.Mutations, mutationsPath)...)
	errs = append(errs, Lifecycle(r.Lifecycle, lifecyclePath)...)
	errs = append(errs, Pin(r.Pin, pinPath)...)
	return errs
}

// ReleaseSpec validates a Release's spec.
func ReleaseSpec(spec *convoyv1alpha1.ReleaseSpec, path *field.Path, opts ReleaseOptions) field.ErrorList {
	var errs field.ErrorList
	if spec.TargetNamespace != "" {
		for _, msg := range utilvalidation.IsDNS1123Label(spec.TargetNamespace) {
			errs = append(errs, field.Invalid(path.Child("targetNamespace"), spec.TargetNamespace, msg))
		}
	}
	if spec.ServiceAccountName != "" {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(spec.ServiceAccountName) {
			errs = append(errs, field.Invalid(path.Child("serviceAccountName"), spec.ServiceAccountName,
				msg+" (the name of a ServiceAccount in the Release's namespace)"))
		}
	}
	errs = append(errs, chart(&spec.Chart, path.Child("chart"), opts)...)
	for i := range spec.ValuesFrom {
		errs = append(errs, valuesReference(&spec.ValuesFrom[i], path.Child("valuesFrom").Index(i))...)
	}
	errs = append(errs, syncPolicy(&spec.SyncPolicy, path.Child("syncPolicy"))...)
	if fp := spec.FailurePolicy; fp != nil {
		fpPath := path.Child("failurePolicy")
		errs = append(errs, duration(fp.HealthTimeout, fpPath.Child("healthTimeout"), true)...)
		if fp.Action != "" && !sets.New(failureActions...).Has(string(fp.Action)) {
			errs = append(errs, field.NotSupported(fpPath.Child("action"), fp.Action, failureActions))
		}
	}
	if spec.DeletionPolicy != "" && !sets.New(deletionPolicys...).Has(string(spec.DeletionPolicy)) {
		errs = append(errs, field.NotSupported(path.Child("deletionPolicy"), spec.DeletionPolicy, deletionPolicys))
	}
	return errs
}

func chart(c *convoyv1alpha1.ChartSource, path *field.Path, opts ReleaseOptions) field.ErrorList {
	if c.Git != nil {
		errs := gitChart(c, path, opts)
		if c.Verify != nil {
			errs = append(errs, field.Forbidden(path.Child("verify"),
				"verifies charts of Helm repositories and OCI registries; the commits of a chart from Git are verified with git.verify"))
		}
		return errs
	}
	var errs field.ErrorList
	repoPath := path.Child("repository")
	if c.Repository == "" {
		errs = append(errs, field.Required(repoPath, "an http(s) Helm repository URL or oci://host/path (or spec.chart.git for a chart in a Git repository)"))
	} else if msg := repositoryProblem(c.Repository); msg != "" {
		errs = append(errs, field.Invalid(repoPath, c.Repository, msg))
	}
	if c.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "the chart's name"))
	}
	if c.SecretRef != nil && c.SecretRef.Name == "" {
		errs = append(errs, field.Required(path.Child("secretRef", "name"), ""))
	}
	return append(errs, chartVerify(c, path)...)
}

// chartVerify validates spec.chart.verify of a chart of a repository: a provider
// that fits the repository's scheme (cosign: oci://, helm: http(s)://), and the
// trust material the provider takes: cosign exactly one of secretRef and keyless,
// keyless an issuer and a subject (exact or regular expressions that compile), helm
// a secretRef and no keyless.
func chartVerify(c *convoyv1alpha1.ChartSource, path *field.Path) field.ErrorList {
	v := c.Verify
	if v == nil {
		return nil
	}
	var errs field.ErrorList
	vPath := path.Child("verify")
	scheme := ""
	if u, err := url.Parse(c.Repository); err == nil {
		scheme = u.Scheme
	}
	switch v.Provider {
	case convoyv1alpha1.ChartVerifyCosign:
		if scheme != "oci" && c.Repository != "" {
			errs = append(errs, field.Invalid(vPath.Child("provider"), v.Provider,
				"cosign verifies charts of OCI registries (oci://); for an http(s) repository use helm (provenance files)"))
		}
		switch {
		case v.SecretRef == nil && v.Keyless == nil:
			errs = append(errs, field.Required(vPath, "cosign needs secretRef (a Secret with the key cosign.pub) or keyless (the signer's issuer and subject)"))
		case v.SecretRef != nil && v.Keyless != nil:
			errs = append(errs, field.Forbidden(vPath.Child("keyless"), "set either secretRef (a key) or keyless, not both"))
		}
	case convoyv1alpha1.ChartVerifyHelm:
		if scheme != "http" && scheme != "https" && c.Repository != "" {
			errs = append(errs, field.Invalid(vPath.Child("provider"), v.Provider,
				"helm verifies the provenance files of http(s) Helm repositories; for an OCI registry use cosign"))
		}
		if v.SecretRef == nil {
			errs = append(errs, field.Required(vPath.Child("secretRef"), "helm needs a Secret with the key keyring (the PGP public keys of the chart's signers)"))
		}
		if v.Keyless != nil {
			errs = append(errs, field.Forbidden(vPath.Child("keyless"), "keyless is for cosign only"))
		}
	case "":
		errs = append(errs, field.Required(vPath.Child("provider"), "cosign (OCI registries) or helm (http(s) repositories)"))
	default:
		errs = append(errs, field.NotSupported(vPath.Child("provider"), v.Provider,
			[]string{string(convoyv1alpha1.ChartVerifyCosign), string(convoyv1alpha1.ChartVerifyHelm)}))
	}
	if v.SecretRef != nil && v.SecretRef.Name == "" {
		errs = append(errs, field.Required(vPath.Child("secretRef", "name"), ""))
	}
	if k := v.Keyless; k != nil && v.Provider == convoyv1alpha1.ChartVerifyCosign {
		errs = append(errs, keyless(k, vPath.Child("keyless"))...)
	}
	return errs
}

// keyless validates the identity of keyless cosign signatures: an issuer and a
// subject, each exactly or as a regular expression that compiles, not both.
func keyless(k *convoyv1alpha1.KeylessVerify, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct{ exact, regExp, exactValue, regExpValue, what string }{
		{"issuer", "issuerRegExp", k.Issuer, k.IssuerRegExp, "the OIDC issuer of the signer's certificate"},
		{"subject", "subjectRegExp", k.Subject, k.SubjectRegExp, "the subject of the signer's certificate"},
	} {
		switch {
		case f.exactValue == "" && f.regExpValue == "":
			errs = append(errs, field.Required(path.Child(f.exact), fmt.Sprintf("%s (or %s)", f.what, f.regExp)))
		case f.exactValue != "" && f.regExpValue != "":
			errs = append(errs, field.Forbidden(path.Child(f.regExp), fmt.Sprintf("set either %s or %s, not both", f.exact, f.regExp)))
		}
		if f.regExpValue != "" {
			if _, err := regexp.Compile(f.regExpValue); err != nil {
				errs = append(errs, field.Invalid(path.Child(f.regExp), f.regExpValue, fmt.Sprintf("not a regular expression: %v", err)))
			}
		}
	}
	return errs
}

// gitChart validates a chart from Git: git alone (none of repository, name, version
// and secretRef beside it), a URL of an allowed scheme, exactly one ref, a path
// inside the repository, and the Secret of verify named.
func gitChart(c *convoyv1alpha1.ChartSource, path *field.Path, opts ReleaseOptions) field.ErrorList {
	var errs field.ErrorList
	for name, v := range map[string]bool{"repository": c.Repository != "", "name": c.Name != "", "version": c.Version != "", "secretRef": c.SecretRef != nil} {
		if v {
			errs = append(errs, field.Forbidden(path.Child(name),
				"set either repository, name and version (a Helm repository or OCI registry) or git, not both; the credentials of git go to git.secretRef"))
		}
	}
	slices.SortFunc(errs, func(a, b *field.Error) int { return strings.Compare(a.Field, b.Field) })
	g, gPath := c.Git, path.Child("git")
	urlPath := gPath.Child("url")
	if g.URL == "" {
		errs = append(errs, field.Required(urlPath, "the Git repository: https://, http:// or ssh://"))
	} else if msg := gitURLProblem(g.URL, opts); msg != "" {
		errs = append(errs, field.Invalid(urlPath, redactedURL(g.URL), msg))
	}
	refPath := gPath.Child("ref")
	var set []string
	for _, f := range []struct{ name, value string }{{"branch", g.Ref.Branch}, {"tag", g.Ref.Tag}, {"semver", g.Ref.Semver}, {"commit", g.Ref.Commit}} {
		if f.value != "" {
			set = append(set, f.name)
		}
	}
	switch {
	case len(set) == 0:
		errs = append(errs, field.Required(refPath, "set exactly one of branch, tag, semver and commit"))
	case len(set) > 1:
		errs = append(errs, field.Invalid(refPath, strings.Join(set, ", "), "set exactly one of branch, tag, semver and commit"))
	}
	if g.Ref.Branch != "" && !gitRefNameOK(g.Ref.Branch) {
		errs = append(errs, field.Invalid(refPath.Child("branch"), g.Ref.Branch, "not a valid branch name"))
	}
	if g.Ref.Tag != "" && !gitRefNameOK(g.Ref.Tag) {
		errs = append(errs, field.Invalid(refPath.Child("tag"), g.Ref.Tag, "not a valid tag name"))
	}
	if g.Ref.Semver != "" {
		if _, err := semver.NewConstraint(g.Ref.Semver); err != nil {
			errs = append(errs, field.Invalid(refPath.Child("semver"), g.Ref.Semver, fmt.Sprintf("not a semver range: %v", err)))
		}
	}
	if g.Ref.Commit != "" && !fullCommit(g.Ref.Commit) {
		errs = append(errs, field.Invalid(refPath.Child("commit"), g.Ref.Commit, "must be a full commit hash: 40 lowercase hex digits"))
	}
	if msg := gitPathProblem(g.Path); msg != "" {
		errs = append(errs, field.Invalid(gPath.Child("path"), g.Path, msg))
	}
	if g.SecretRef != nil && g.SecretRef.Name == "" {
		errs = append(errs, field.Required(gPath.Child("secretRef", "name"), ""))
	}
	if g.Verify != nil && g.Verify.SecretRef.Name == "" {
		errs = append(errs, field.Required(gPath.Child("verify", "secretRef", "name"),
			"the Secret whose key keys holds the PGP and SSH public keys trusted to sign the commit"))
	}
	return errs
}

// gitURLProblem says what is wrong with a Git repository URL, or "" when nothing is.
func gitURLProblem(raw string, opts ReleaseOptions) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "not a URL (scp-like user@host:path is not supported: write ssh://user@host/path)"
	}
	switch u.Scheme {
	case "http", "https", "ssh":
		if u.Host == "" {
			return "must name a host"
		}
	case "file":
		if !opts.AllowGitFileURLs {
			return "file:// URLs are not allowed on this server (the operator allows them with --allow-git-file-urls); use https://, http:// or ssh://"
		}
		return ""
	default:
		return "must be an https://, http:// or ssh:// URL (scp-like user@host:path is not supported: write ssh://user@host/path)"
	}
	if _, hasPassword := u.User.Password(); hasPassword {
		return "must not hold a password: put the credentials in the Secret of git.secretRef"
	}
	if u.User != nil && u.Scheme != "ssh" {
		return "must not hold a user name: put the credentials in the Secret of git.secretRef"
	}
	return ""
}

// redactedURL is raw with a password in it replaced, for error messages.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<not a URL>"
	}
	return u.Redacted()
}

// gitRefNameOK is a loose check of git check-ref-format: what can never be a branch or tag.
func gitRefNameOK(name string) bool {
	if strings.HasPrefix(name, "-") || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") ||
		strings.HasSuffix(name, ".lock") || strings.HasSuffix(name, ".") || strings.Contains(name, "..") ||
		strings.Contains(name, "@{") || strings.Contains(name, "//") || name == "@" {
		return false
	}
	return !strings.ContainsFunc(name, func(r rune) bool {
		return r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r)
	})
}

// fullCommit says whether s is a full SHA-1 commit hash, lowercase.
func fullCommit(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// gitPathProblem says what is wrong with a chart's folder in a repository, or "".
func gitPathProblem(p string) string {
	if p == "" {
		return ""
	}
	if strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return "must be a relative folder in the repository, with / between its parts (charts/podinfo)"
	}
	for part := range strings.SplitSeq(strings.TrimSuffix(p, "/"), "/") {
		if part == ".." {
			return "must stay inside the repository: no .. parts"
		}
	}
	return ""
}

// repositoryProblem says what is wrong with a chart repository, or "" when nothing is.
func repositoryProblem(repository string) string {
	u, err := url.Parse(repository)
	if err != nil {
		return fmt.Sprintf("not a URL: %v", err)
	}
	switch u.Scheme {
	case "http", "https", "oci":
	default:
		return "must be an http:// or https:// Helm repository URL, or oci://host/path"
	}
	if u.Host == "" {
		return "must name a host"
	}
	return ""
}

func valuesReference(v *convoyv1alpha1.ValuesReference, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !sets.New(valuesKinds...).Has(string(v.Kind)) {
		errs = append(errs, field.NotSupported(path.Child("kind"), v.Kind, valuesKinds))
	}
	if v.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "the ConfigMap's or Secret's name"))
	}
	return errs
}

func syncPolicy(p *convoyv1alpha1.SyncPolicy, path *field.Path) field.ErrorList {
	errs := duration(p.Interval, path.Child("interval"), false)
	if b := p.RetryBackoff; b != nil {
		bPath := path.Child("retryBackoff")
		errs = append(errs, duration(b.Initial, bPath.Child("initial"), true)...)
		// Any factor is accepted: below 1 it means 2.
		errs = append(errs, duration(b.Max, bPath.Child("max"), false)...)
	}
	return errs
}

// Mutations validates a Release's mutations.
func Mutations(mutations []convoyv1alpha1.Mutation, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range mutations {
		m := &mutations[i]
		mPath := path.Index(i)
		switch {
		case m.Patch != "" && len(m.JSONPatch) > 0:
			errs = append(errs, field.Invalid(mPath, "patch and jsonPatch", "set exactly one of patch and jsonPatch, not both"))
		case m.Patch == "" && len(m.JSONPatch) == 0:
			errs = append(errs, field.Required(mPath, "set exactly one of patch and jsonPatch"))
		}
		if m.Patch != "" {
			if msg := strategicPatchProblem(m.Patch); msg != "" {
				errs = append(errs, field.Invalid(mPath.Child("patch"), "<patch>", msg))
			}
		}
		for j, op := range m.JSONPatch {
			errs = append(errs, jsonPatchOperation(&op, mPath.Child("jsonPatch").Index(j))...)
		}
		if m.Target.LabelSelector != "" {
			if _, err := labels.Parse(m.Target.LabelSelector); err != nil {
				errs = append(errs, field.Invalid(mPath.Child("target", "labelSelector"), m.Target.LabelSelector, err.Error()))
			}
		}
	}
	return errs
}

// strategicPatchProblem says why patch cannot be a strategic merge patch, or "" when
// it can: it must be a YAML or JSON object, as the controller reads it.
func strategicPatchProblem(patch string) string {
	j, err := yaml.YAMLToJSON([]byte(patch))
	if err != nil {
		return fmt.Sprintf("must be a YAML or JSON object (a strategic merge patch): %v", err)
	}
	if t := bytes.TrimSpace(j); len(t) == 0 || t[0] != '{' {
		return "must be a YAML or JSON object (a strategic merge patch), such as 'spec: {replicas: 2}'"
	}
	return ""
}

// jsonPatchOperation validates one RFC 6902 operation: a known op, JSON pointers, a
// value for add, replace and test, a from for move and copy.
func jsonPatchOperation(op *convoyv1alpha1.JSONPatchOperation, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !sets.New(jsonPatchOps...).Has(op.Op) {
		errs = append(errs, field.NotSupported(path.Child("op"), op.Op, jsonPatchOps))
	}
	if !strings.HasPrefix(op.Path, "/") {
		errs = append(errs, field.Invalid(path.Child("path"), op.Path, "must be a JSON pointer starting with /"))
	}
	switch op.Op {
	case "add", "replace", "test":
		if op.Value == nil {
			errs = append(errs, field.Required(path.Child("value"), fmt.Sprintf("a %q operation needs a value (a null value reads as none: use remove to delete a field)", op.Op)))
		}
	case "move", "copy":
		if !strings.HasPrefix(op.From, "/") {
			errs = append(errs, field.Invalid(path.Child("from"), op.From, fmt.Sprintf("a %q operation needs from, a JSON pointer starting with /", op.Op)))
		}
	}
	return errs
}

// Lifecycle validates a Release's lifecycle hooks.
func Lifecycle(l *convoyv1alpha1.Lifecycle, path *field.Path) field.ErrorList {
	if l == nil {
		return nil
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range l.Hooks {
		h := &l.Hooks[i]
		hPath := path.Child("hooks").Index(i)
		switch {
		case h.Name == "":
			errs = append(errs, field.Required(hPath.Child("name"), "a hook needs a name"))
		case names.Has(h.Name):
			errs = append(errs, field.Duplicate(hPath.Child("name"), h.Name))
		default:
			for _, msg := range utilvalidation.IsDNS1123Label(h.Name) {
				errs = append(errs, field.Invalid(hPath.Child("name"), h.Name, msg))
			}
		}
		names.Insert(h.Name)
		if !sets.New(hookPhases...).Has(string(h.Phase)) {
			errs = append(errs, field.NotSupported(hPath.Child("phase"), h.Phase, hookPhases))
		}
		if h.Batch < 0 {
			errs = append(errs, field.Invalid(hPath.Child("batch"), h.Batch, "must not be negative"))
		}
		errs = append(errs, duration(h.Timeout, hPath.Child("timeout"), true)...)
		switch {
		case h.Job == nil:
			errs = append(errs, field.Required(hPath.Child("job"), "a hook needs a Job with a template"))
		case len(h.Job.Template.Spec.Containers) == 0:
			errs = append(errs, field.Required(hPath.Child("job", "template"), "a hook needs a Job template with at least one container"))
		}
	}
	return errs
}

// Pin validates a pin as stored (after the server filled renderRef in).
func Pin(p *convoyv1alpha1.Pin, path *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	refPath := path.Child("renderRef")
	if p.RenderRef == "" {
		return field.ErrorList{field.Required(refPath, "no render to pin: give a renderRef, or pin after a successful apply")}
	}
	return renderRef(p.RenderRef, refPath)
}

// renderRef is the field error of a render ref that is not a full one (sha256: and 64
// lowercase hex digits), as convoyv1alpha1.RenderRef.Validate checks it; none for a
// full ref.
func renderRef(ref string, path *field.Path) field.ErrorList {
	if problem := convoyv1alpha1.RenderRef(ref).Problem(); problem != "" {
		return field.ErrorList{field.Invalid(path, ref, problem)}
	}
	return nil
}
