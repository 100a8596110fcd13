#!/usr/bin/env bash
# make chaos-seeds: TestChaos's short run (the defaults of make test) on seeds drawn at
# random, one after the other, then which failed, each with the command that replays it.
#
#   test/chaos/seeds.sh [N]   N seeds drawn at random (default 20), after the
#                             regression seeds of test/chaos/testdata/seeds
#   SEEDS='1 2 3'             these seeds instead (no regression seeds, none drawn)
#   CHAOS_FLAGS='-faults=20'  more flags for every run
#   CHAOS_SEEDS_DIR=dir       where each run's output goes (default: a new /tmp dir)
#   CONVOY_BIN=path           this convoy binary instead of building ./cmd/convoy
#
# It builds ./cmd/convoy (unless CONVOY_BIN) and the test binary once. A run's state (every process's
# log) stays in the /tmp/convoy-chaos-* directory that its output names when it fails.
set -euo pipefail

n=${1:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
kube_bin=${CONVOY_KUBE_BIN_DIR:-$root/bin/k8s/v1.37.2}
out=${CHAOS_SEEDS_DIR:-$(mktemp -d /tmp/convoy-chaos-seeds-XXXXXX)}
mkdir -p "$out"

if [[ -n ${SEEDS:-} ]]; then
	read -r -a seeds <<<"$SEEDS"
else
	seeds=()
	while read -r s _; do
		[[ -n $s && $s != \#* ]] && seeds+=("$s")
	done <"$root/test/chaos/testdata/seeds"
	for ((i = 0; i < n; i++)); do
		seeds+=("$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')")
	done
fi
echo "== ${#seeds[@]} seeds: ${seeds[*]}"
echo "== outputs in $out"

convoy=${CONVOY_BIN:-$out/convoy}
if [[ -z ${CONVOY_BIN:-} ]]; then
	echo "== building ./cmd/convoy"
	(cd "$root" && go build -o "$convoy" ./cmd/convoy)
fi
echo "== building the test binary"
(cd "$root" && go test -c -o "$out/chaos.test" ./test/chaos)

failed=()
for seed in "${seeds[@]}"; do
	log="$out/seed-$seed.log"
	began=$(date +%s)
	rc=0
	# The test binary runs in its package's directory (testdata/).
	(cd "$root/test/chaos" && CONVOY_KUBE_BIN_DIR=$kube_bin "$out/chaos.test" -test.count=1 -test.timeout=30m \
		-test.v -test.run '^TestChaos$' -convoy="$convoy" -seed="$seed" ${CHAOS_FLAGS:-}) >"$log" 2>&1 || rc=$?
	took=$(($(date +%s) - began))
	if ((rc == 0)); then
		echo "== seed $seed: ok in ${took}s"
	else
		failed+=("$seed")
		echo "== seed $seed: FAILED in ${took}s (output: $log)"
		grep -E 'VIOLATION|--- FAIL|FAIL:|seed [0-9]+: ' "$log" | head -5 | sed 's/^/     /' || true
	fi
done

echo
echo "== ${#failed[@]} of ${#seeds[@]} seeds failed"
for seed in "${failed[@]}"; do
	echo "   seed $seed: CONVOY_KUBE_BIN_DIR=$kube_bin go test -count=1 -timeout 30m -v -run '^TestChaos\$' ./test/chaos -seed=$seed ${CHAOS_FLAGS:-}   (output: $out/seed-$seed.log)"
done
((${#failed[@]} == 0))
