//go:build tools

// Package etcd pins the etcd server that convoy's local control plane runs.
package etcd

import _ "go.etcd.io/etcd/server/v3"
