package validation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
	"kumodo.io/convoy/internal/releaseset/clustervars"
)

// MaxReleaseSetNameLength is the longest name a ReleaseSet may have: 63 characters
// (the longest Release name the set writes) less "-" and the "-<10 hex digits>" that
// shortens a long `<set>-<cluster>`. So every Release of a set begins with the
// set's whole name and a "-", however long the Cluster's name is.
const MaxReleaseSetNameLength = 63 - len("-") - len("-0123456789")

var approvalModes = []string{string(convoyv1alpha1.ApprovalAutomatic), string(convoyv1alpha1.ApprovalManual)}

// reservedTemplateLabels are the labels the ReleaseSet itself writes on each Release.
var reservedTemplateLabels = []string{convoyv1alpha1.LabelReleaseSet, convoyv1alpha1.LabelCluster}

// reservedTemplateAnnotations are the annotations the ReleaseSet writes (its revision,
// the names behind digest labels) or that belong to each Release alone (its /sync
// requests).
var reservedTemplateAnnotations = []string{
	convoyv1alpha1.AnnotationReleaseSetRevision, convoyv1alpha1.AnnotationReleaseSetOverrides, convoyv1alpha1.LabelReleaseSet, convoyv1alpha1.LabelCluster,
	convoyv1alpha1.AnnotationSyncRequestedAt, convoyv1alpha1.AnnotationSyncForceRequestedAt,
	convoyv1alpha1.AnnotationSyncRequestedRender,
}

// ReleaseSet validates a new ReleaseSet.
func ReleaseSet(s *convoyv1alpha1.ReleaseSet, opts ReleaseOptions) field.ErrorList {
	errs := ObjectMeta(&s.ObjectMeta, true)
	if len(s.Name) > MaxReleaseSetNameLength {
		errs = append(errs, field.TooLong(metadataPath.Child("name"), s.Name, MaxReleaseSetNameLength))
	}
	return append(errs, ReleaseSetSpec(&s.Spec, specPath, opts)...)
}

// ReleaseSetUpdate validates an updated ReleaseSet (its name cannot change).
func ReleaseSetUpdate(s, old *convoyv1alpha1.ReleaseSet, opts ReleaseOptions) field.ErrorList {
	errs := ObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta)
	return append(errs, ReleaseSetSpec(&s.Spec, specPath, opts)...)
}

// ReleaseSetStatusUpdate validates a write of a ReleaseSet's status.
func ReleaseSetStatusUpdate(s, old *convoyv1alpha1.ReleaseSet) field.ErrorList {
	errs := ObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta)
	return append(errs, metav1validation.ValidateConditions(s.Status.Conditions, field.NewPath("status", "conditions"))...)
}

// ReleaseSetSpec validates a ReleaseSet's spec: the selectors, the template (a
// Release's metadata and spec, without spec.cluster), the cluster overrides, the
// stages and maxRemovals.
func ReleaseSetSpec(spec *convoyv1alpha1.ReleaseSetSpec, path *field.Path, opts ReleaseOptions) field.ErrorList {
	errs := labelSelector(spec.ClusterSelector, path.Child("clusterSelector"))
	errs = append(errs, releaseTemplate(&spec.Template, path.Child("template"), opts)...)
	errs = append(errs, clusterOverrides(spec, path)...)
	errs = append(errs, stages(spec.Strategy.Stages, path.Child("strategy", "stages"))...)
	errs = append(errs, maxRemovals(spec.Strategy.MaxRemovals, path.Child("strategy", "maxRemovals"))...)
	return errs
}

func labelSelector(s *metav1.LabelSelector, path *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	return metav1validation.ValidateLabelSelector(s, metav1validation.LabelSelectorValidationOptions{}, path)
}

func releaseTemplate(t *convoyv1alpha1.ReleaseTemplate, path *field.Path, opts ReleaseOptions) field.ErrorList {
	metaPath := path.Child("metadata")
	errs := metav1validation.ValidateLabels(t.Metadata.Labels, metaPath.Child("labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(t.Metadata.Annotations, metaPath.Child("annotations"))...)
	for _, key := range reservedTemplateLabels {
		if _, ok := t.Metadata.Labels[key]; ok {
			errs = append(errs, field.Forbidden(metaPath.Child("labels").Key(key), "the ReleaseSet sets this label on each Release"))
		}
	}
	for _, key := range reservedTemplateAnnotations {
		if _, ok := t.Metadata.Annotations[key]; ok {
			errs = append(errs, field.Forbidden(metaPath.Child("annotations").Key(key),
				"written by the ReleaseSet or by each Release's own /sync, not by the template"))
		}
	}
	specPath := path.Child("spec")
	if t.Spec.Cluster != "" {
		errs = append(errs, field.Forbidden(specPath.Child("cluster"),
			"must be empty: the ReleaseSet sets each Release's cluster (spec.clusterSelector picks the Clusters)"))
	}
	return append(errs, ReleaseSpec(&t.Spec, specPath, opts)...)
}

// MaxClusterOverrides is the most entries spec.clusterOverrides may have: every
// reconcile merges each of them for each Cluster of the set, and a hundred is more
// than per-region, per-ring and per-Cluster values need (values common to many
// Clusters go in one override with a selector, not in one override per Cluster).
const MaxClusterOverrides = 100

// clusterOverrides validates spec.clusterOverrides: at most MaxClusterOverrides; each
// with a clusterSelector ({} selects every Cluster of the set) that parses; values, if
// any, a JSON object in whose strings each "$(" begins $(cluster.name) or
// $(cluster.labels['<key>']) with a valid label key, or is written "$$(" for a
// literal "$(" (package clustervars says what the controller replaces). With
// overrides, template.spec.values must be a JSON object too, or nothing: the
// overrides merge over it.
func clusterOverrides(spec *convoyv1alpha1.ReleaseSetSpec, path *field.Path) field.ErrorList {
	list := spec.ClusterOverrides
	if len(list) == 0 {
		return nil
	}
	valuesPath := path.Child("template", "spec", "values")
	path = path.Child("clusterOverrides")
	var errs field.ErrorList
	if len(list) > MaxClusterOverrides {
		errs = append(errs, field.TooMany(path, len(list), MaxClusterOverrides))
	}
	if v := spec.Template.Spec.Values; v != nil && !nullValues(v.Raw) {
		if _, err := jsonObject(v.Raw); err != nil {
			errs = append(errs, field.Invalid(valuesPath, "",
				"must be a JSON object of values when spec.clusterOverrides merge over it: "+err.Error()))
		}
	}
	for i := range list {
		o := &list[i]
		oPath := path.Index(i)
		if o.ClusterSelector == nil {
			errs = append(errs, field.Required(oPath.Child("clusterSelector"),
				"the Clusters (among the set's) that get these values; {} selects every Cluster of the set"))
		} else {
			errs = append(errs, labelSelector(o.ClusterSelector, oPath.Child("clusterSelector"))...)
		}
		if o.Values == nil || nullValues(o.Values.Raw) {
			continue
		}
		vals, err := jsonObject(o.Values.Raw)
		if err != nil {
			errs = append(errs, field.Invalid(oPath.Child("values"), "", "must be a JSON object of values, as template.spec.values: "+err.Error()))
			continue
		}
		errs = append(errs, clusterReferences(vals, oPath.Child("values"))...)
	}
	return errs
}

// clusterReferences reports the malformed $(...) in the string values of v.
func clusterReferences(v any, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch v := v.(type) {
	case string:
		for _, msg := range clustervars.Problems(v) {
			errs = append(errs, field.Invalid(path, v, msg))
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			errs = append(errs, clusterReferences(v[k], path.Child(k))...)
		}
	case []any:
		for i, e := range v {
			errs = append(errs, clusterReferences(e, path.Index(i))...)
		}
	}
	return errs
}

// nullValues says whether raw holds no values: empty or null.
func nullValues(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// jsonObject decodes raw, which must be one JSON object.
func jsonObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	if out == nil {
		return nil, errors.New("null")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more after the object")
	}
	return out, nil
}

// stages validates the rollout's stages. Names are unique DNS labels. Only the last
// stage may go without a clusterSelector (one without takes every Cluster left, so
// the stages after it would be empty). "rest" names the implicit last stage, the
// Clusters that no stage takes: a stage may take the name only where it is that
// stage, the last one and without a clusterSelector.
func stages(list []convoyv1alpha1.Stage, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range list {
		st := &list[i]
		sPath := path.Index(i)
		last := i == len(list)-1
		switch {
		case st.Name == "":
			errs = append(errs, field.Required(sPath.Child("name"), "a stage needs a name"))
		case names.Has(st.Name):
			errs = append(errs, field.Duplicate(sPath.Child("name"), st.Name))
		default:
			for _, msg := range utilvalidation.IsDNS1123Label(st.Name) {
				errs = append(errs, field.Invalid(sPath.Child("name"), st.Name, msg))
			}
		}
		names.Insert(st.Name)
		if st.Name == convoyv1alpha1.StageRest && (!last || st.ClusterSelector != nil) {
			errs = append(errs, field.Invalid(sPath.Child("name"), st.Name,
				`"rest" is the implicit last stage (the Clusters no stage takes): only the last stage, without a clusterSelector, may be named so`))
		}
		if st.ClusterSelector == nil && !last {
			errs = append(errs, field.Required(sPath.Child("clusterSelector"),
				"only the last stage may go without a clusterSelector: a stage without one takes every Cluster left, and the stages after it would be empty"))
		}
		errs = append(errs, labelSelector(st.ClusterSelector, sPath.Child("clusterSelector"))...)
		errs = append(errs, maxParallel(st.MaxParallel, sPath.Child("maxParallel"))...)
		if st.Approval != "" && !sets.New(approvalModes...).Has(string(st.Approval)) {
			errs = append(errs, field.NotSupported(sPath.Child("approval"), st.Approval, approvalModes))
		}
	}
	return errs
}

// maxParallel is a number of at least 1, or a percentage from 1% to 100%.
func maxParallel(v *intstr.IntOrString, path *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	if v.Type == intstr.Int {
		if v.IntVal < 1 {
			return field.ErrorList{field.Invalid(path, v.IntVal, "must be at least 1 (unset: every Release of the stage at once)")}
		}
		return nil
	}
	return percent(v.StrVal, 1, path)
}

// maxRemovals is a number of at least 0, or a percentage from 0% to 100% (0: every
// removal waits for /promote).
func maxRemovals(v *intstr.IntOrString, path *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return field.ErrorList{field.Invalid(path, v.IntVal, "must be at least 0 (unset: 25% of the set's Releases)")}
		}
		return nil
	}
	return percent(v.StrVal, 0, path)
}

// percent is a percentage from least% to 100%, such as "25%".
func percent(s string, least int, path *field.Path) field.ErrorList {
	digits, ok := strings.CutSuffix(s, "%")
	n, err := strconv.Atoi(digits)
	if !ok || err != nil || digits != strconv.Itoa(n) {
		return field.ErrorList{field.Invalid(path, s, "must be a number, or a percentage such as 25%")}
	}
	if n < least || n > 100 {
		return field.ErrorList{field.Invalid(path, s, fmt.Sprintf("a percentage must be from %d%% to 100%%, got %d%%", least, n))}
	}
	return nil
}
