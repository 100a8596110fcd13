// Package fromhelm decides how a Release takes over a release that Helm installed:
// which Helm release record it is taken from (the latest revision, only when it is
// deployed), the Release that is equivalent to it (chart, user-supplied values,
// target namespace, manual mode, AnnotationHelmRelease), and how Helm's record of it
// is marked once convoy applied it (superseded, labelled LabelTakenOverBy).
//
// The decisions (Pick, ReleaseFrom, CheckSupersede) are pure. Storage reads and
// writes Helm's records through Helm's own Secrets or ConfigMaps storage driver (Driver,
// ParseDriver reads HELM_DRIVER's values); it never deletes
// a record, so that helm history keeps every revision. It must not apply or delete
// anything else on a cluster.
package fromhelm
