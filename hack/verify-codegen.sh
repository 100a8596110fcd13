#!/usr/bin/env bash
# Fails when the committed generated code differs from what hack/update-codegen.sh
# produces: regenerates into a temporary copy of the repository and compares.
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

CONVOY_TOOLS_BIN="$root/bin/tools" "$here/update-codegen.sh" "$tmp" >/dev/null

status=0
for f in api/v1alpha1/zz_generated.deepcopy.go api/v1alpha1/zz_generated.defaults.go \
  api/v1alpha1/zz_generated.model_name.go api/openapi/zz_generated.openapi.go \
  hack/tools/api-rule-violations.list; do
  if ! diff -u "$root/$f" "$tmp/$f" >"$tmp/diff" 2>&1; then
    echo "stale: $f (run hack/update-codegen.sh)" >&2
    head -40 "$tmp/diff" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "Generated code is up to date."
exit $status
