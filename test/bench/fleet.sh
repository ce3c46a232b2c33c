#!/usr/bin/env bash
# A token in etcd against a token file (issue 18): one fleet module
# (build/libmodexp-pkcs11-fleet.so), two slots, one on a token file and one
# on a one-member etcd (etcd's embeddable server, keystore/etcdtest/member,
# on free loopback ports, stopped at the end). p11bench (plain C, dlopen)
# signs from C threads on both slots in alternating rounds, checking every
# signature, and prints ops/s, etcd/file and ops per CPU-second of each.
# Signing with a cached key never touches the cluster, so the target is
# etcd/file >= 0.95; the member's CPU is read from /proc and reported.
#
# Environment (all optional):
#   FLEET=path           the fleet module (default build/libmodexp-pkcs11-fleet.so)
#   BENCH_SECONDS=s      seconds per cell and slot (default 2)
#   BENCH_THREADS=list   thread counts (default 1,2)
#   BENCH_ONLY=ids       op ids (default rsa2048-sign-pkcs1,p256-sign)
#   BENCH_ROUNDS=n       alternating rounds per cell (default 6)
#   BENCH_OUT=dir        where the client, table, TSV and logs go (default build/bench-fleet)
# Extra arguments are passed to p11bench.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
FLEET=${FLEET:-$root/build/libmodexp-pkcs11-fleet.so}
OUT=${BENCH_OUT:-$root/build/bench-fleet}
CC=${CC:-cc}

[[ -f $FLEET ]] || { echo "fleet.sh: $FLEET not found (run make build)" >&2; exit 2; }
[[ -f /usr/include/p11-kit-1/p11-kit/pkcs11.h ]] || { echo "fleet.sh: p11-kit header missing (apt-get install libp11-kit-dev)" >&2; exit 2; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
$CC -O2 -pthread -Wall -Wextra -Werror -o "$OUT/p11bench" "$here/p11bench.c" -ldl
(cd "$root" && go build -tags modexp_etcd -o "$OUT/member" ./keystore/etcdtest/member)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/modexp-bench-fleet.XXXXXX")
member=
cleanup() {
	if [[ -n $member ]]; then kill "$member" 2>/dev/null || true; wait "$member" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
client=http://127.0.0.1:$(free_port)
peer=http://127.0.0.1:$(free_port)
mkdir -p "$tmp/m0" "$tmp/home"
"$OUT/member" "$tmp/m0" m0 "$client" "$peer" "m0=$peer" >"$OUT/member.out" 2>&1 &
member=$!
for _ in $(seq 200); do grep -q ready "$OUT/member.out" && break; sleep 0.1; done
grep -q ready "$OUT/member.out" || { echo "fleet.sh: the etcd member did not start:" >&2; cat "$OUT/member.out" >&2; exit 2; }

cat >"$tmp/modexp-token.toml" <<CONF
[[slot]]
label = "bench-etcd"
etcd_endpoints = ["$client"]
etcd_prefix = "/modexp/bench/"
engine = "soft"

[[slot]]
label = "bench-file"
token_file = "$tmp/file.db"
engine = "soft"
CONF
unset MODEXP_TOKEN_ENGINE MODEXP_TOKEN_LOG_LEVEL
export MODEXP_TOKEN_CONF=$tmp/modexp-token.toml MODEXP_TOKEN_LOG=$OUT/module.log HOME=$tmp/home

# shellcheck source=proccpu.sh
. "$here/proccpu.sh"

args=(--name etcd --module "$FLEET" --label bench-etcd --pin 123456 --so-pin 87654321
	--name2 file --module2 "$FLEET" --label2 bench-file --pin2 123456 --so-pin2 87654321
	--only "${BENCH_ONLY:-rsa2048-sign-pkcs1,p256-sign}")
# A first short run initialises both tokens and generates the keys, so that
# the measured run below signs only.
"$OUT/p11bench" "${args[@]}" --seconds 0.1 --rounds 1 --threads 1 >"$OUT/setup.txt" 2>&1 ||
	{ cat "$OUT/setup.txt" >&2; exit 2; }

# The token labelled bench-etcd must be the one in etcd (p11bench
# initialises the first uninitialised slot it finds).
etcd_slot=$(sed -n 's/.*msg="slot opened" slot=\([0-9]*\) token_store=etcd:.*/\1/p' "$OUT/module.log" | tail -1)
grep -q "msg=\"token initialised\" slot=$etcd_slot label=bench-etcd" "$OUT/module.log" ||
	{ echo "fleet.sh: the token bench-etcd is not the etcd slot ($etcd_slot): see $OUT/module.log" >&2; exit 2; }

cpu0=$(proc_cpu "$member")
status=0
"$OUT/p11bench" "${args[@]}" \
	--seconds "${BENCH_SECONDS:-2}" --threads "${BENCH_THREADS:-1,2}" --rounds "${BENCH_ROUNDS:-6}" \
	--tsv "$OUT/bench.tsv" "$@" >"$OUT/bench.txt" || status=$?
cpu1=$(proc_cpu "$member")

cat "$OUT/bench.txt"
echo
echo "etcd member CPU during the measured run: $(((cpu1 - cpu0) / 1000000)) ms" | tee "$OUT/summary.txt"
if [[ -s "$OUT/bench.tsv" ]]; then
	echo
	echo "# TSV ($OUT/bench.tsv)"
	cat "$OUT/bench.tsv"
fi
exit "$status"
