// Package integration_test tests convoy apiserver through the aggregator of a real
// local control plane (internal/localcluster): one control plane and one in-process
// convoy apiserver for the package, a namespace per test. Tests named TestSPnn prove
// the sync policy's requirement SP-nn (see docs/sync-policy-requirements.md).
package integration_test
