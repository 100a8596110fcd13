#!/usr/bin/env bash
# Regenerates the code derived from api/v1alpha1 with the generators pinned in
# hack/tools/go.mod:
#   api/v1alpha1/zz_generated.deepcopy.go    deepcopy-gen
#   api/v1alpha1/zz_generated.defaults.go    defaulter-gen
#   api/v1alpha1/zz_generated.model_name.go  openapi-gen (OpenAPI model names)
#   api/openapi/zz_generated.openapi.go      openapi-gen (definitions, with the meta,
#                                            runtime, resource, batch, core and
#                                            scheduling/v1alpha3 types a JobSpec uses)
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
  k8s.io/kube-openapi/cmd/openapi-gen)

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
echo "Done."
