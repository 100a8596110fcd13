#!/usr/bin/env bash
# Fails when the committed generated code differs from what hack/update-codegen.sh
# produces: regenerates into a temporary copy of the repository and compares. The
# command references (docs/reference/kubectl-convoy, docs/reference/convoy) need the
# whole module: the TestCLIReferenceIsCurrent tests compare them, run at the end.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The generators need the module (go.mod, go.sum) and the API packages.
mkdir -p "$tmp/hack"
cp "$root/go.mod" "$root/go.sum" "$tmp/"
cp -R "$root/api" "$tmp/api"
cp -R "$root/hack/tools" "$tmp/hack/tools"
cp -R "$root/hack/api-docs" "$tmp/hack/api-docs"
cp -R "$root/hack/gen-api-constants" "$tmp/hack/gen-api-constants"

CONVOY_TOOLS_BIN="$root/bin/tools" "$here/update-codegen.sh" "$tmp" >/dev/null

status=0
for f in api/v1alpha1/zz_generated.deepcopy.go api/v1alpha1/zz_generated.defaults.go \
  api/v1alpha1/zz_generated.model_name.go api/openapi/zz_generated.openapi.go \
  hack/tools/api-rule-violations.list docs/reference/api.md docs/reference/constants.md; do
  if ! diff -u "$root/$f" "$tmp/$f" >"$tmp/diff" 2>&1; then
    echo "stale: $f (run hack/update-codegen.sh)" >&2
    head -40 "$tmp/diff" >&2
    status=1
  fi
done
if ! (cd "$root" && go test -count=1 -short -run '^TestCLIReferenceIsCurrent$' ./cmd/convoy ./internal/cli >"$tmp/clidocs" 2>&1); then
  echo "stale: the command reference (run hack/update-codegen.sh)" >&2
  cat "$tmp/clidocs" >&2
  status=1
fi
[ $status -eq 0 ] && echo "Generated code is up to date."
exit $status
