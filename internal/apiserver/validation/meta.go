package validation

import (
	"time"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	convoyv1alpha1 "kumodo.io/convoy/api/v1alpha1"
)

var metadataPath = field.NewPath("metadata")

// ObjectMeta validates the metadata of a new object.
func ObjectMeta(meta *metav1.ObjectMeta, namespaced bool) field.ErrorList {
	return apivalidation.ValidateObjectMeta(meta, namespaced, apivalidation.NameIsDNSSubdomain, metadataPath)
}

// ObjectMetaUpdate validates the metadata of an updated object.
func ObjectMetaUpdate(meta, old *metav1.ObjectMeta) field.ErrorList {
	return apivalidation.ValidateObjectMetaUpdate(meta, old, metadataPath)
}

// LatestSyncTime is the latest sync time there is: RFC 3339 has four-digit years. A
// sync annotation later than it (in UTC: 9999-12-31T23:59:59-01:00 is in the year
// 10000) is rejected, and /sync never writes a later time.
var LatestSyncTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// SyncAnnotations checks that the two sync time annotations, when present, hold RFC
// 3339 times, and that sync-requested-render, when present, holds a full render ref
// (what a bound /sync writes; the short form is only for the ?render= of the request).
func SyncAnnotations(annotations map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, key := range []string{convoyv1alpha1.AnnotationSyncRequestedAt, convoyv1alpha1.AnnotationSyncForceRequestedAt} {
		value, ok := annotations[key]
		if !ok {
			continue
		}
		t, err := convoyv1alpha1.ParseSyncTime(value)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(metadataPath.Child("annotations").Key(key), value,
				"must be an RFC 3339 time, such as 2026-12-02T10:04:05Z"))
		case t.After(LatestSyncTime):
			errs = append(errs, field.Invalid(metadataPath.Child("annotations").Key(key), value,
				"must not be later than 9999-12-31T23:59:59Z in UTC (RFC 3339 has no year 10000)"))
		}
	}
	if value, ok := annotations[convoyv1alpha1.AnnotationSyncRequestedRender]; ok {
		if p := convoyv1alpha1.RenderRef(value).Problem(); p != "" {
			errs = append(errs, field.Invalid(metadataPath.Child("annotations").Key(convoyv1alpha1.AnnotationSyncRequestedRender), value,
				"must be a full render ref, sha256: and 64 lowercase hex digits: "+p))
		}
	}
	return errs
}

// duration checks an optional duration: not negative, and more than 0 when positive is set.
func duration(d *metav1.Duration, path *field.Path, positive bool) field.ErrorList {
	if d == nil {
		return nil
	}
	switch {
	case positive && d.Duration <= 0:
		return field.ErrorList{field.Invalid(path, d.Duration.String(), "must be more than 0")}
	case d.Duration < 0:
		return field.ErrorList{field.Invalid(path, d.Duration.String(), "must not be negative")}
	}
	return nil
}
