#!/usr/bin/env bash
# The device engine against the software engine it is backed by, through
# PKCS#11 (issue 6): one module, two slots, one on the software engine used
# directly and one on a modexpd backed by the same software engine over a
# unix socket. p11bench (plain C, dlopen) signs from C threads on both slots
# in alternating rounds, checking every signature, and prints ops/s and
# device/soft; the daemon's CPU is read from /proc to give the CPU per
# operation of the whole device path (module + daemon) against the
# software engine's.
#
# Environment (all optional):
#   OURS=path            our module (default build/libmodexp-pkcs11.so)
#   MODEXPD=path         the daemon (default build/modexpd)
#   BENCH_SECONDS=s      seconds per cell and slot (default 2)
#   BENCH_THREADS=list   thread counts (default 1,2)
#   BENCH_ONLY=ids       op ids (default rsa2048-sign-pkcs1,rsa2048-sign-pss)
#   BENCH_ROUNDS=n       alternating rounds per cell (default 8)
#   BENCH_OUT=dir        where the client, table, TSV and logs go (default build/bench-device)
#   DEVICE_OPTS=opts     options appended to the device engine spec (e.g. wait=0,conns=1)
#   MODEXPD_OPTS=opts    options added to `modexpd serve` (e.g. --cpuprofile FILE)
#   BENCH_PROCS=n        instead of threads, n client processes of 1 thread each, all on one
#                        slot at a time (each with its own copy of the tokens), device and soft
#                        alternating in A-B-B-A rounds: modexpd serves the n processes together
#                        where the in-process engine of each serves only its own; ops/s summed,
#                        CPU per operation of the clients (their timed windows, rusage) and of
#                        modexpd (schedstat over a window inside theirs, per MODEXP_PAIR answered)
# Extra arguments are passed to p11bench.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
OURS=${OURS:-$root/build/libmodexp-pkcs11.so}
MODEXPD=${MODEXPD:-$root/build/modexpd}
OUT=${BENCH_OUT:-$root/build/bench-device}
CC=${CC:-cc}

[[ -f $OURS && -x $MODEXPD ]] || { echo "device.sh: $OURS or $MODEXPD not found (run make build)" >&2; exit 2; }
[[ -f /usr/include/p11-kit-1/p11-kit/pkcs11.h ]] || { echo "device.sh: p11-kit header missing (apt-get install libp11-kit-dev)" >&2; exit 2; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
$CC -O2 -pthread -Wall -Wextra -Werror -o "$OUT/p11bench" "$here/p11bench.c" -ldl

tmp=$(mktemp -d "${TMPDIR:-/tmp}/modexp-bench-device.XXXXXX")
daemon=
cleanup() {
	if [[ -n $daemon ]]; then kill "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$tmp/lib" "$tmp/run" "$tmp/home"
chmod 700 "$tmp/run"
cp "$(readlink -f "$OURS")" "$tmp/lib/libmodexp-pkcs11.so"
cp "$(readlink -f "$MODEXPD")" "$tmp/lib/modexpd"
sock=$tmp/run/modexpd.sock
"$tmp/lib/modexpd" serve --listen "unix:$sock" --engine soft --log "$OUT/modexpd.log" ${MODEXPD_OPTS:-} &
daemon=$!
for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.05; done
[[ -S $sock ]] || { echo "device.sh: modexpd did not start (see $OUT/modexpd.log)" >&2; exit 2; }

cat >"$tmp/modexp-token.toml" <<EOF
[[slot]]
label = "bench-device"
token_file = "$tmp/device.db"
engine = "device:unix:$sock${DEVICE_OPTS:+,$DEVICE_OPTS}"

[[slot]]
label = "bench-soft"
token_file = "$tmp/soft.db"
engine = "soft"
EOF
unset MODEXP_TOKEN_ENGINE MODEXP_TOKEN_LOG_LEVEL
export MODEXP_TOKEN_CONF=$tmp/modexp-token.toml MODEXP_TOKEN_LOG=$OUT/module.log HOME=$tmp/home

# shellcheck source=proccpu.sh
. "$here/proccpu.sh"

args=(--name device --module "$tmp/lib/libmodexp-pkcs11.so" --label bench-device --pin 123456 --so-pin 87654321
	--name2 soft --module2 "$tmp/lib/libmodexp-pkcs11.so" --label2 bench-soft --pin2 123456 --so-pin2 87654321
	--only "${BENCH_ONLY:-rsa2048-sign-pkcs1,rsa2048-sign-pss}")
# A first short run initialises the tokens and generates the keys (key
# generation runs its primality tests on the engine: on the daemon for the
# device slot), so that the measured run below signs only.
"$OUT/p11bench" "${args[@]}" --seconds 0.1 --rounds 1 --threads 1 >"$OUT/setup.txt" 2>&1 ||
	{ cat "$OUT/setup.txt" >&2; exit 2; }

if [[ -n ${BENCH_PROCS:-} ]]; then
	# n processes, each with the tokens made above copied to its own
	# directory and a configuration pointing at them.
	n=$BENCH_PROCS
	for i in $(seq "$n"); do
		mkdir -p "$tmp/p$i"
		cp "$tmp/device.db" "$tmp/soft.db" "$tmp/p$i/"
		sed "s|$tmp/device.db|$tmp/p$i/device.db|; s|$tmp/soft.db|$tmp/p$i/soft.db|" "$tmp/modexp-token.toml" >"$tmp/p$i/modexp-token.toml"
	done
	op=${BENCH_ONLY:-rsa2048-sign-pkcs1}
	secs=${BENCH_SECONDS:-2}
	# pairs: the MODEXP_PAIR requests modexpd has answered so far (its STATUS).
	pairs() {
		"$tmp/lib/modexpd" status --listen "unix:$sock" 2>/dev/null | awk '$1 == "MODEXP_PAIR" { n = $2 } END { print n + 0 }'
	}
	# cell SLOT ROUND: n processes signing at once on SLOT; prints
	# "ops_per_s client_cpu_us_per_op daemon_cpu_us_per_op". The clients'
	# CPU is their own figure for their timed window (p11bench); modexpd's
	# is measured over a window inside the clients' (from 0.25 s after
	# signatures flow, for 40 % of a cell) per MODEXP_PAIR answered: each
	# process's start (the device engine's self-test on modexpd, which the
	# software engine runs in the client before its window) is left out
	# on both sides.
	cell() {
		local slot=$1 r=$2 pids=() i p0 q0 q1 d0 d1 dcpu=0 t
		for i in $(seq "$n"); do
			MODEXP_TOKEN_CONF=$tmp/p$i/modexp-token.toml "$OUT/p11bench" --name "$slot" --module "$tmp/lib/libmodexp-pkcs11.so" \
				--label "bench-$slot" --pin 123456 --so-pin 87654321 --only "$op" --threads 1 --rounds 1 \
				--seconds "$secs" --tsv "$tmp/p$i/$slot-$r.tsv" >"$tmp/p$i/$slot-$r.txt" 2>&1 &
			pids+=($!)
		done
		if [[ $slot == device ]]; then
			p0=$(pairs)
			for ((t = 0; t < $(awk -v s="$secs" 'BEGIN { print int(s * 20) }'); t++)); do # at most half a cell
				(($(pairs) - p0 >= 4 * n)) && break
				sleep 0.02
			done
			sleep 0.25
			d0=$(proc_cpu "$daemon") q0=$(pairs)
			sleep "$(awk -v s="$secs" 'BEGIN { print s * 0.4 }')"
			d1=$(proc_cpu "$daemon") q1=$(pairs)
			((q1 > q0)) && dcpu=$(((d1 - d0) / 1000 / (q1 - q0)))
		fi
		for i in "${pids[@]}"; do wait "$i" || echo "device.sh: a client process failed (see $tmp/p*/$slot-$r.txt)" >&2; done
		# TSV columns of one module: 4 ops/s, 5 ops per CPU-second, 7 ops.
		awk -F'\t' -v dcpu="$dcpu" 'FNR > 1 { rate += $4; ops += $7; if ($5 > 0) cpu += $7 / $5 }
			END { printf "%.0f %.0f %.0f\n", rate, (ops ? cpu * 1e6 / ops : 0), dcpu }' "$tmp"/p*/"$slot-$r.tsv"
	}
	status=0
	rounds=${BENCH_ROUNDS:-4}
	{
		echo "# $n client processes x 1 thread, $op, ${secs} s a cell, $rounds rounds (A-B-B-A); $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
		printf '%-6s %-7s %10s %18s %18s\n' round slot "ops/s" "client CPU us/op" "modexpd CPU us/op"
	} >"$OUT/bench.txt"
	printf 'round\tslot\tprocs\tops_per_s\tclient_cpu_us_per_op\tdaemon_cpu_us_per_op\n' >"$OUT/bench.tsv"
	for r in $(seq "$rounds"); do
		order=(device soft)
		((r % 2 == 0)) && order=(soft device)
		for slot in "${order[@]}"; do
			read -r rate ccpu dcpu < <(cell "$slot" "$r")
			[[ $slot == soft ]] && dcpu=0
			printf '%-6s %-7s %10s %18s %18s\n' "$r" "$slot" "$rate" "$ccpu" "$dcpu" >>"$OUT/bench.txt"
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$slot" "$n" "$rate" "$ccpu" "$dcpu" >>"$OUT/bench.tsv"
		done
	done
	# A cell failed when a process left no row, an error or a status other than ok.
	rows=$(cat "$tmp"/p*/*.tsv 2>/dev/null | awk -F'\t' -v op="$op" '$1 == op && $8 == 0 && $11 == "ok"' | wc -l)
	if ((rows != n * 2 * rounds)); then
		echo "device.sh: $((n * 2 * rounds - rows)) of $((n * 2 * rounds)) client cells failed" >&2
		status=1
	fi
	awk -F'\t' 'NR > 1 { s[$2] += $4; c[$2] += $5 + $6; k[$2]++ }
		END { if (k["device"] && k["soft"]) printf "\nmean: device %.0f ops/s, soft %.0f ops/s, device/soft %.2f (wall); CPU per op device %.0f us, soft %.0f us, soft/device %.2f (per CPU)\n",
			s["device"] / k["device"], s["soft"] / k["soft"], (s["device"] / k["device"]) / (s["soft"] / k["soft"]),
			c["device"] / k["device"], c["soft"] / k["soft"], (c["soft"] / k["soft"]) / (c["device"] / k["device"]) }' "$OUT/bench.tsv" >>"$OUT/bench.txt"
	"$tmp/lib/modexpd" status --listen "unix:$sock" >"$OUT/modexpd-status.txt" 2>&1 || true
	cat "$OUT/bench.txt"
	echo
	cat "$OUT/modexpd-status.txt"
	exit "$status"
fi

cpu0=$(proc_cpu "$daemon")
status=0
"$OUT/p11bench" "${args[@]}" \
	--seconds "${BENCH_SECONDS:-2}" --threads "${BENCH_THREADS:-1,2}" --rounds "${BENCH_ROUNDS:-8}" \
	--tsv "$OUT/bench.tsv" "$@" >"$OUT/bench.txt" || status=$?
cpu1=$(proc_cpu "$daemon")
"$tmp/lib/modexpd" status --listen "unix:$sock" >"$OUT/modexpd-status.txt" 2>&1 || true

cat "$OUT/bench.txt"
if [[ -s "$OUT/bench.tsv" ]]; then
	# TSV columns: 4 device ops/s, 5 soft ops/s, 6 ratio, 8 device ops per
	# module CPU-second, 10 device ops, 15 soft ops per CPU-second, 17 soft ops.
	awk -F'\t' -v dns=$((cpu1 - cpu0)) '
		NR > 1 { ops += $10; mod += $10 / $8; soft_ops += $17; soft += $17 / $15 }
		END {
			if (!ops || !soft_ops) exit
			printf "\nCPU per operation over all cells: device %.0f us (module %.0f + modexpd %.0f), soft %.0f us\n",
				(mod * 1e6 + dns / 1e3) / ops, mod * 1e6 / ops, dns / 1e3 / ops, soft * 1e6 / soft_ops
		}' "$OUT/bench.tsv" | tee "$OUT/summary.txt"
	echo
	cat "$OUT/modexpd-status.txt"
	echo
	echo "# TSV ($OUT/bench.tsv)"
	cat "$OUT/bench.tsv"
fi
exit "$status"
