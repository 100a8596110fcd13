// Package apply puts a render on a target cluster and takes it off again:
// the pre-apply dry run, the apply of one sync wave, the prune of what a new
// render dropped, the deletion of what a Release applied, the hooks' objects
// and Jobs (the runner of a policy.HookStep: read, apply, create, delete), and
// the pure bookkeeping of the ReleaseInventory's object list. It is the only
// package that writes to a target cluster.
//
// It decides how an object is applied (server-side apply, field manager
// convoy, forced conflicts, CRDs and Namespaces first within a wave, the fields
// of Helm's field managers taken over at an object's first apply), which
// failures make a render Unappliable and which are transient (DeployFailed,
// PruneFailed), and which objects a prune or a deletion must leave alone
// (annotated convoy.kumodo.io/prune: disabled, taken over by another
// Release, CustomResourceDefinitions) or leave in place and let go of
// (helm.sh/resource-policy: keep).
//
// It must not decide when to apply: which waves, whether the previous waves
// are healthy, whether a force skips the dry run, which hooks run, when to
// retry. Those are the caller's (internal/policy and the controller). It
// never writes the ReleaseInventory or a Release itself; it returns what the
// caller should write. It talks to one target cluster through the
// controller-runtime client it is given and knows nothing of how that client
// was made.
package apply
