//go:build tools

// Package kwok pins kwok, which simulates the nodes and pods of the local
// control plane.
package kwok

import _ "sigs.k8s.io/kwok/cmd/kwok"
