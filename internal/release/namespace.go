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

// OutlivedNamespace says whether a Release created at created has outlived the
// namespace it was created in: that namespace is gone, or the namespace of that name
// now is a later one (created after the Release, to the second). Such a Release is
// one the namespace controller did not delete: it finalizes a namespace with what its
// discovery lists, and a kube-apiserver that has just started serves discovery before
// it has registered the aggregated APIs (convoy's among them), without an error. The
// Release must then be deleted, as its namespace's deletion meant; left alone, it
// would apply its objects again into the next namespace of its name.
//
// A terminating namespace has not been outlived: the namespace controller is deleting
// its content. A Release created in the same second as the namespace of its name is
// taken as the namespace's own (timestamps have a second's resolution).
func OutlivedNamespace(created time.Time, ns Namespace) bool {
	switch {
	case !ns.Found:
		return true
	case ns.Terminating:
		return false
	default:
		return created.Truncate(time.Second).Before(ns.Created.Truncate(time.Second))
	}
}
