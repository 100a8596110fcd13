#!/usr/bin/env bash
# Regenerates the code derived from api/v1alpha1 with the generators pinned in
# hack/tools/go.mod:
#   api/v1alpha1/zz_generated.deepcopy.go    deepcopy-gen
#   api/v1alpha1/zz_generated.defaults.go    defaulter-gen
#   api/v1alpha1/zz_generated.model_name.go  openapi-gen (OpenAPI model names)
#   api/openapi/zz_generated.openapi.go      openapi-gen (definitions, with the meta,
#                                            runtime, resource, batch, core and
#                                            scheduling/v1alpha3 types a JobSpec uses)
#   docs/reference/api.md                    crd-ref-docs (templates in hack/api-docs)
#   docs/reference/constants.md              hack/gen-api-constants (go/doc)
# and, when run on this repository (not on the copy of verify-codegen.sh):
#   docs/reference/kubectl-convoy/*.md       hack/gen-cli-docs (cobra/doc)
#   docs/reference/convoy/*.md               cmd/convoy's TestCLIReferenceIsCurrent -update-reference
#   deploy/{apiserver,controller,observer,rbac,monitoring}/*.yaml  hack/gen-deploy (from charts/convoy)
#   docs/development.md, section Layout    hack/layout (the packages' doc comments)
# Usage: hack/update-codegen.sh [repository root, default: this repository]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "${1:-$here/..}" && pwd)"
tools="$here/tools"
bin="${CONVOY_TOOLS_BIN:-$here/../bin/tools}"
mkdir -p "$bin"
bin="$(cd "$bin" && pwd)"

echo "Building the code generators (hack/tools/go.mod) into $bin..."
(cd "$tools" && go build -o "$bin/" \
  k8s.io/code-generator/cmd/deepcopy-gen \
  k8s.io/code-generator/cmd/defaulter-gen \
  k8s.io/kube-openapi/cmd/openapi-gen \
  github.com/elastic/crd-ref-docs)

header="$tools/boilerplate.go.txt"
api=kumodo.io/convoy/api/v1alpha1
cd "$root"

echo "deepcopy-gen..."
rm -f api/v1alpha1/zz_generated.deepcopy.go
"$bin/deepcopy-gen" --go-header-file "$header" --output-file zz_generated.deepcopy.go "$api"

echo "defaulter-gen..."
rm -f api/v1alpha1/zz_generated.defaults.go
"$bin/defaulter-gen" --go-header-file "$header" --output-file zz_generated.defaults.go "$api"

echo "openapi-gen..."
rm -f api/v1alpha1/zz_generated.model_name.go api/openapi/zz_generated.openapi.go
mkdir -p api/openapi
"$bin/openapi-gen" --go-header-file "$header" \
  --output-dir api/openapi --output-pkg kumodo.io/convoy/api/openapi \
  --output-file zz_generated.openapi.go \
  --output-model-name-file zz_generated.model_name.go \
  --report-filename hack/tools/api-rule-violations.list \
  --readonly-pkg k8s.io/apimachinery/pkg/apis/meta/v1 \
  --readonly-pkg k8s.io/apimachinery/pkg/runtime \
  --readonly-pkg k8s.io/apimachinery/pkg/version \
  --readonly-pkg k8s.io/apimachinery/pkg/api/resource \
  --readonly-pkg k8s.io/apimachinery/pkg/util/intstr \
  --readonly-pkg k8s.io/api/core/v1 \
  --readonly-pkg k8s.io/api/batch/v1 \
  --readonly-pkg k8s.io/api/scheduling/v1alpha3 \
  k8s.io/apimachinery/pkg/apis/meta/v1 \
  k8s.io/apimachinery/pkg/runtime \
  k8s.io/apimachinery/pkg/version \
  k8s.io/apimachinery/pkg/api/resource \
  k8s.io/apimachinery/pkg/util/intstr \
  k8s.io/api/core/v1 \
  k8s.io/api/batch/v1 \
  k8s.io/api/scheduling/v1alpha3 \
  "$api"
echo "crd-ref-docs..."
mkdir -p docs/reference
"$bin/crd-ref-docs" --source-path=./api/v1alpha1 --config=hack/api-docs/config.yaml \
  --templates-dir=hack/api-docs/templates --renderer=markdown --log-level=ERROR \
  --output-path=docs/reference/api.md >/dev/null
echo "gen-api-constants..."
go run ./hack/gen-api-constants -pkg api/v1alpha1 -out docs/reference/constants.md

if [ "$root" = "$(cd "$here/.." && pwd)" ]; then
  echo "gen-cli-docs (kubectl-convoy)..."
  go run ./hack/gen-cli-docs -out docs/reference/kubectl-convoy
  echo "convoy command reference..."
  go test -count=1 -run '^TestCLIReferenceIsCurrent$' ./cmd/convoy -update-reference >/dev/null
  echo "gen-deploy (deploy/ from charts/convoy)..."
  go run ./hack/gen-deploy >/dev/null
  echo "layout (docs/development.md's package list)..."
  go run ./hack/layout
fi
echo "Done."
