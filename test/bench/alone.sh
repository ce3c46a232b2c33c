#!/usr/bin/env bash
# Our module alone, for A/B runs of two builds: p11bench (one round) on a
# throwaway token, one line per operation and thread count with ops/s,
# ops per process CPU-second and the CPUs used. No SoftHSMv2: two builds of
# our module cannot share a process (each carries a Go runtime), so
# alternate invocations instead, e.g.
#
#	for b in old new new old; do OURS=/tmp/$b.so LABEL=$b test/bench/alone.sh; done
#
# Environment (all optional): OURS (default build/libmodexp-pkcs11.so),
# LABEL (default the module's file name), BENCH_ONLY (default
# rsa2048-sign-pkcs1), BENCH_THREADS (default 1,8), BENCH_SECONDS (default
# 3), CC; anything else (MODEXP_KERNEL=adx, GOMAXPROCS) reaches the module.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
OURS=${OURS:-$root/build/libmodexp-pkcs11.so}
[[ -f $OURS ]] || { echo "alone.sh: $OURS not found (run make build)" >&2; exit 2; }
LABEL=${LABEL:-$(basename "$OURS")}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/modexp-alone.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/data" "$tmp/home"
${CC:-cc} -O2 -pthread -Wall -Wextra -Werror -o "$tmp/p11bench" "$here/p11bench.c" -ldl
cp "$OURS" "$tmp/module.so" # a rebuild during the run must not change the file under the process
unset MODEXP_TOKEN_CONF MODEXP_TOKEN_ENGINE
XDG_DATA_HOME=$tmp/data HOME=$tmp/home MODEXP_TOKEN_LOG=$tmp/module.log \
	"$tmp/p11bench" --module "$tmp/module.so" --label alone --pin 123456 --so-pin 87654321 \
	--only "${BENCH_ONLY:-rsa2048-sign-pkcs1}" --threads "${BENCH_THREADS:-1,8}" --rounds 1 \
	--seconds "${BENCH_SECONDS:-3}" --tsv "$tmp/out.tsv" >"$tmp/out.txt" 2>&1 ||
	{ cat "$tmp/out.txt" >&2; exit 1; }
awk -F'\t' -v l="$LABEL" 'NR > 1 {
	printf "%-12s %-22s %3s thr %10.0f ops/s %10.0f ops/CPU-s %5.2f CPUs\n", l, $1, $3, $4, $5, $4 / $5
}' "$tmp/out.tsv"
