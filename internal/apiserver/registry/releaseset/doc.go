// Package releaseset is the storage of ReleaseSets: the main resource, /status and
// /promote.
//
// It enforces the write rules of a ReleaseSet: only a spec change bumps the
// generation; the main resource keeps status and approvals from storage; /status
// writes only status; /promote writes only approvals. Creating or updating a
// ReleaseSet needs the rights to write the Releases it stands for (tenancy.go). It
// does not plan or write Releases: that is the controller's (internal/releaseset).
package releaseset
