#!/usr/bin/env bash
# Builds the Kubernetes components of convoy's local control plane from the Go
# module proxy into bin/k8s/<version>/ at the repository root. Idempotent: a
# binary that is already there is skipped. Usage: hack/kube/build.sh [name...]
set -euo pipefail

KUBE_VERSION=v1.37.2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${CONVOY_KUBE_BIN_DIR:-$root/bin/k8s/$KUBE_VERSION}"
mkdir -p "$out"

minor="${KUBE_VERSION#v1.}"; minor="${minor%%.*}"
stamp=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  stamp+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  stamp+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=2026-01-01T00:00:00Z"
done

# name | module dir | package | ldflags
targets=(
  "etcd|$here/etcd|go.etcd.io/etcd/server/v3|"
  "kube-apiserver|$here|k8s.io/kubernetes/cmd/kube-apiserver|$stamp"
  "kube-controller-manager|$here|k8s.io/kubernetes/cmd/kube-controller-manager|$stamp"
  "kube-scheduler|$here|k8s.io/kubernetes/cmd/kube-scheduler|$stamp"
  "kubectl|$here|k8s.io/kubernetes/cmd/kubectl|$stamp"
  "kwok|$here/kwok|sigs.k8s.io/kwok/cmd/kwok|"
  "kwok-stages.yaml|$here/kwok|./stages|"
)

want=("$@")
selected() {
  [ ${#want[@]} -eq 0 ] && return 0
  local w; for w in "${want[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1
}

total=0; for t in "${targets[@]}"; do selected "${t%%|*}" && total=$((total+1)); done
n=0
for t in "${targets[@]}"; do
  IFS='|' read -r name dir pkg ldflags <<<"$t"
  selected "$name" || continue
  n=$((n+1))
  if [ -e "$out/$name" ]; then
    echo "[$n/$total] $name: already built ($out/$name)"
    continue
  fi
  hint=""
  case "$name" in
    kube-apiserver) hint=" (cold Go cache: ~15 minutes on 2 cores; seconds when cached)" ;;
    kube-controller-manager) hint=" (cold Go cache: ~7 more minutes)" ;;
  esac
  echo "[$n/$total] $name: building $pkg$hint..."
  start=$(date +%s)
  if [ "$name" = kwok-stages.yaml ]; then
    ( cd "$dir" && go run "$pkg" >"$out/$name.tmp" )
  else
    ( cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w$ldflags" -o "$out/$name.tmp" "$pkg" )
  fi
  mv "$out/$name.tmp" "$out/$name"
  echo "[$n/$total] $name: done in $(( $(date +%s) - start ))s"
done
echo "Kubernetes $KUBE_VERSION binaries are in $out"
