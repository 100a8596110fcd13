package policy

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Namespace is what the controller knows of the namespace a Release is stored in.
type Namespace struct {
	// Found: a namespace of that name exists (a cache miss confirmed on the API server).
	Found bool
	// UID is its UID; Created its creationTimestamp; Terminating, that its deletion has begun.
	UID         types.UID
	Created     time.Time
	Terminating bool
}

// Stored is what a Release (or a ReleaseSet) says of the namespace it was created in.
type Stored struct {
	// NamespaceUID is the UID convoy apiserver recorded at its creation
	// (AnnotationNamespaceUID); empty on one created before convoy recorded it.
	NamespaceUID types.UID
	// Created is its creationTimestamp.
	Created time.Time
}

// ClockSkewMargin is by how much a Release must predate the namespace of its name to
// have outlived an earlier one, when no namespace UID is recorded on it: the two
// creation times come from two servers' clocks (convoy apiserver's, on a node, and
// kube-apiserver's, to the second), and a Release created just after its namespace
// must never read as older than it — the mistake would delete the Release and what it
// applied. One minute is the clock skew that Kubernetes itself tolerates between its
// servers (the leeway of its token validation); without a recorded UID, a namespace
// deleted and created again within it of the Release's creation is not told apart.
const ClockSkewMargin = time.Minute

// OutlivedNamespace says whether a Release has outlived the namespace it was created
// in: that namespace is gone, or the namespace of that name now is a later one. Such a
// Release is one the namespace controller did not delete: it finalizes a namespace
// with what its discovery lists, and a kube-apiserver that has just started serves
// discovery before it has registered the aggregated APIs (convoy's among them),
// without an error. The Release must then be deleted, as its namespace's deletion
// meant; left alone, it would apply its objects again into the next namespace of its
// name.
//
// With the namespace's UID recorded, the namespace of that name is the Release's own
// when it has that UID, whatever the times (a namespace deleted and created again
// within a second is told apart). Without it (a Release created before convoy
// recorded it), the later namespace is one created more than ClockSkewMargin after the
// Release, and a namespace deleted and created again within the margin is not told
// apart. A terminating namespace that is (or, without a UID, may be) the Release's own
// has not been outlived: the namespace controller is deleting its content.
func OutlivedNamespace(rel Stored, ns Namespace) bool {
	switch {
	case !ns.Found:
		return true
	case rel.NamespaceUID != "":
		return rel.NamespaceUID != ns.UID
	case ns.Terminating:
		return false
	default:
		return rel.Created.Add(ClockSkewMargin).Before(ns.Created)
	}
}

// NamespaceUIDToRecord is the namespace UID to record on a Release that has none (one
// created before convoy recorded it), or "" when none is to be recorded: only when the
// Release provably belongs to the namespace of its name, that is when the namespace
// existed at the Release's creation — it was created more than ClockSkewMargin before
// it — and is not terminating. Two namespaces of one name never exist at once, so the
// Release was created in this one. Otherwise the Release stays under the time rule of
// OutlivedNamespace: it is left alone within the margin and deleted past it.
func NamespaceUIDToRecord(rel Stored, ns Namespace) types.UID {
	if rel.NamespaceUID != "" || !ns.Found || ns.Terminating || ns.UID == "" {
		return ""
	}
	if !ns.Created.Add(ClockSkewMargin).Before(rel.Created) {
		return ""
	}
	return ns.UID
}

// HowOutlived says, for the message of its deletion, how an object (a Release or a
// ReleaseSet) that OutlivedNamespace tells: by the namespace UID it recorded, or by
// its creation time.
func HowOutlived(rel Stored, ns Namespace) string {
	if rel.NamespaceUID == "" {
		return "it was created at " + rel.Created.UTC().Format(time.RFC3339)
	}
	now := "no namespace of that name exists now"
	if ns.Found {
		now = "the namespace of that name now has UID " + string(ns.UID)
	}
	return fmt.Sprintf("it was created in the namespace of UID %s (%s)", rel.NamespaceUID, now)
}
