//go:build tools

// Package tools pins the code generators that hack/update-codegen.sh runs. It has its
// own go.mod so that the generators' dependencies stay out of convoy's module.
package tools

import (
	_ "github.com/elastic/crd-ref-docs"
	_ "k8s.io/code-generator/cmd/deepcopy-gen"
	_ "k8s.io/code-generator/cmd/defaulter-gen"
	_ "k8s.io/kube-openapi/cmd/openapi-gen"
)
