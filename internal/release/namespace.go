package release

import "time"

// Namespace is what the controller knows of the namespace a Release is stored in.
type Namespace struct {
	// Found: a namespace of that name exists (a cache miss confirmed on the API server).
	Found bool
	// Created is its creationTimestamp; Terminating, that its deletion has begun.
	Created     time.Time
	Terminating bool
}

// ClockSkewMargin is by how much a Release must predate the namespace of its name to
// have outlived an earlier one: the two creation times come from two servers' clocks
// (convoy apiserver's, on a node, and kube-apiserver's, to the second), and a Release
// created just after its namespace must never read as older than it — the mistake
// would delete the Release and what it applied. One minute is the clock skew that
// Kubernetes itself tolerates between its servers (the leeway of its token
// validation); a namespace deleted and created again within it of the Release's
// creation is not told apart.
const ClockSkewMargin = time.Minute

// OutlivedNamespace says whether a Release created at created has outlived the
// namespace it was created in: that namespace is gone, or the namespace of that name
// now is a later one (created more than ClockSkewMargin after the Release). Such a
// Release is one the namespace controller did not delete: it finalizes a namespace
// with what its discovery lists, and a kube-apiserver that has just started serves
// discovery before it has registered the aggregated APIs (convoy's among them),
// without an error. The Release must then be deleted, as its namespace's deletion
// meant; left alone, it would apply its objects again into the next namespace of its
// name.
//
// A terminating namespace has not been outlived: the namespace controller is deleting
// its content. A namespace deleted and created again within ClockSkewMargin of the
// Release's creation is not told apart from the Release's own.
func OutlivedNamespace(created time.Time, ns Namespace) bool {
	switch {
	case !ns.Found:
		return true
	case ns.Terminating:
		return false
	default:
		return created.Add(ClockSkewMargin).Before(ns.Created)
	}
}
