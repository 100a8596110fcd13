package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Label values that convoy derives from names of the user's (a Release's name, its
// namespace, a hook object's name) go through LabelValue: Kubernetes object names may
// be up to 253 characters and, for some kinds (RBAC: "cert-manager:leaderelection"),
// hold characters that a label value may not.

// labelDigestHex is how many hex digits of the sha256 of a name the label value of a
// name that is not a valid label value ends with (80 bits).
const labelDigestHex = 20

// labelReadable is the most characters of the name that such a label value begins
// with, for people reading the labels: <readable>-<digest> is at most 61 characters.
const labelReadable = 40

// LabelValue is the value of a convoy label for s, a name that convoy derives from
// user input. A valid label value (validation.IsValidLabelValue: at most 63
// characters of [A-Za-z0-9_.-], beginning and ending alphanumeric, or empty) is s
// itself, so that the labels of objects convoy applied before stay as they are.
// Anything else is <readable>-<first 20 hex digits of sha256(s)>: readable is the
// first 40 characters of s with each character a label value may not hold replaced
// by '-', trimmed to begin and end alphanumeric (left out when nothing is left).
// Every writer and every reader that selects by such a label computes it with this
// function; SetNameLabel also keeps s itself in an annotation of the same key.
func LabelValue(s string) string {
	if len(validation.IsValidLabelValue(s)) == 0 {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	digest := hex.EncodeToString(sum[:])[:labelDigestHex]
	readable := []byte(s)
	if len(readable) > labelReadable {
		readable = readable[:labelReadable]
	}
	for i, c := range readable {
		if !labelChar(c) {
			readable[i] = '-'
		}
	}
	trimmed := strings.TrimFunc(string(readable), func(r rune) bool { return !alphanumeric(r) })
	if trimmed == "" {
		return digest
	}
	return trimmed + "-" + digest
}

func labelChar(c byte) bool {
	return alphanumeric(rune(c)) || c == '-' || c == '_' || c == '.'
}

func alphanumeric(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// SetNameLabel labels obj with key: LabelValue(name). When that is not name itself
// (a digest), the annotation of the same key holds name, for people and for
// HasNameLabel; otherwise that annotation is removed, so that an object whose name is
// a valid label value carries exactly the labels it always had.
func SetNameLabel(obj metav1.Object, key, name string) {
	value := LabelValue(name)
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[key] = value
	obj.SetLabels(labels)
	annotations := obj.GetAnnotations()
	switch {
	case value != name:
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[key] = name
		obj.SetAnnotations(annotations)
	case annotations[key] != "":
		delete(annotations, key)
		obj.SetAnnotations(annotations)
	}
}

// HasNameLabel reports whether SetNameLabel(obj, key, name) labelled an object with
// these labels and annotations: its label key is LabelValue(name), and its annotation
// key is name when that is a digest, absent otherwise (so that a name that happens to
// equal the digest of another is told apart from it).
func HasNameLabel(labels, annotations map[string]string, key, name string) bool {
	value := LabelValue(name)
	if labels[key] != value {
		return false
	}
	annotation, annotated := annotations[key]
	if value == name {
		return !annotated
	}
	return annotation == name
}

// NameOfLabel is the name that SetNameLabel labelled an object with under key: the
// annotation of that key when there is one (the label is a digest), else the label.
func NameOfLabel(labels, annotations map[string]string, key string) string {
	if name := annotations[key]; name != "" && LabelValue(name) == labels[key] {
		return name
	}
	return labels[key]
}

// SetReleaseLabels labels obj with the Release that applies it:
// LabelReleaseName and LabelReleaseNamespace (SetNameLabel).
func SetReleaseLabels(obj metav1.Object, name, namespace string) {
	SetNameLabel(obj, LabelReleaseName, name)
	SetNameLabel(obj, LabelReleaseNamespace, namespace)
}

// ReleaseSelector is the label selector, as a set, of the objects that the Release
// namespace/name applied (SetReleaseLabels); HasReleaseLabels tells them from an
// object of another Release whose name has the same digest.
func ReleaseSelector(name, namespace string) map[string]string {
	return map[string]string{LabelReleaseName: LabelValue(name), LabelReleaseNamespace: LabelValue(namespace)}
}

// HasReleaseLabels reports whether SetReleaseLabels(obj, name, namespace) labelled
// an object with these labels and annotations.
func HasReleaseLabels(labels, annotations map[string]string, name, namespace string) bool {
	return HasNameLabel(labels, annotations, LabelReleaseName, name) &&
		HasNameLabel(labels, annotations, LabelReleaseNamespace, namespace)
}
