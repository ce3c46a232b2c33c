#!/usr/bin/env bash
# Side-by-side benchmark: ModExp Token against SoftHSMv2 (issue 3).
#
# Sets up two throwaway tokens in a temporary directory (ours through
# XDG_DATA_HOME, i.e. the module's default configuration; SoftHSM through its
# own softhsm2.conf), builds the C client, runs it and prints one table and a
# TSV. Results are also saved under build/bench/. After it, the libraries
# under the post-quantum, Ed448 and X25519 rows run alone in Go
# (test/bench/pqlib: the token's overhead over them, pqlib.tsv), and
# openssl speed gives X25519, which SoftHSMv2 2.6 lacks.
#
# Environment (all optional):
#   OURS=path            our module (default build/libmodexp-pkcs11.so)
#   SOFTHSM=path         SoftHSMv2 module (default: found under /usr/lib)
#   BENCH_SECONDS=s      seconds per cell and module (default 1; key generation gets 3x, at least 3 s)
#   BENCH_THREADS=list   thread counts (default 1,2)
#   BENCH_ONLY=ids       comma-separated substrings of op ids (p11bench --list)
#   BENCH_ROUNDS=n       alternating rounds per cell (default 4: A B B A A B B A)
#   BENCH_ENGINE=spec    engine of our slot (MODEXP_TOKEN_ENGINE), default the module's
#   MODEXP_KERNEL=k      limb kernel of the software engine: auto (default), ifma, adx, purego
#                        (the header shows the kernel in use and the CPU features seen)
#   BENCH_OUT=dir        where the client, table, TSV, chart (bench.svg) and module log go (default build/bench)
#   BENCH_KEEP=1         keep the temporary tokens (path printed)
#   BENCH_OPENSSL=0|1    also run `openssl speed [-multi T] rsa2048` at each thread count T after
#                        the cells (default 1 when the RSA-2048 sign rows are selected): the
#                        library's own rate on the same machine in the same run
#   BENCH_SWEEP=0|1      the concurrency sweep after the cells (default as BENCH_OPENSSL): RSA-2048
#                        PKCS#1 sign at BENCH_SWEEP_THREADS (default 1,2,4,8,16) threads, ours and
#                        SoftHSMv2, then openssl speed -multi T at each T and -multi 2; the ratio
#                        of our 8-thread row to -multi 2; sweep.txt, sweep.tsv, sweep-openssl.tsv,
#                        sweep.svg (ops/s against threads)
# Extra arguments are passed to p11bench.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
OURS=${OURS:-$root/build/libmodexp-pkcs11.so}
# shellcheck source=softhsm.sh
. "$here/softhsm.sh"
OUT=${BENCH_OUT:-$root/build/bench}
CC=${CC:-cc}

[[ -f $OURS ]] || { echo "run.sh: $OURS not found (run make build)" >&2; exit 2; }
[[ -n "${SOFTHSM:-}" && -f $SOFTHSM ]] || { echo "run.sh: libsofthsm2.so not found (apt-get install softhsm2, or set SOFTHSM)" >&2; exit 2; }
[[ -f /usr/include/p11-kit-1/p11-kit/pkcs11.h ]] || { echo "run.sh: p11-kit header missing (apt-get install libp11-kit-dev)" >&2; exit 2; }
OURS=$(readlink -f "$OURS")
SOFTHSM=$(readlink -f "$SOFTHSM")

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
$CC -O2 -pthread -Wall -Wextra -Werror -o "$OUT/p11bench" "$here/p11bench.c" -ldl
# The libraries alone (built here, with the user's Go caches, before HOME moves).
(cd "$root" && ${GO:-go} build -o "$OUT/pqlib" ./test/bench/pqlib)
pqlib=("$OUT/pqlib" -seconds "${BENCH_SECONDS:-1}" -threads "${BENCH_THREADS:-1,2}" ${BENCH_ONLY:+-only "$BENCH_ONLY"})

tmp=$(mktemp -d "${TMPDIR:-/tmp}/modexp-bench.XXXXXX")
if [[ "${BENCH_KEEP:-0}" == 1 ]]; then
	echo "run.sh: tokens kept in $tmp" >&2
else
	trap 'rm -rf "$tmp"' EXIT
fi

# Load a copy of our module: a rebuild during the run must not change the
# file under the process.
mkdir -p "$tmp/lib"
cp "$OURS" "$tmp/lib/libmodexp-pkcs11.so"
echo "run.sh: our module: $OURS ($(stat -c '%y' "$OURS" | cut -d. -f1)), loaded from a copy" >&2

# SoftHSMv2: its own configuration and token directory. The client
# initialises the token (C_InitToken on the free slot, then C_InitPIN).
softhsm_config "$tmp/softhsm"

# Ours: the default configuration (one slot, token file under
# $XDG_DATA_HOME/modexp-token/), pointed at the temporary directory; nothing
# of the user's own configuration is read.
mkdir -p "$tmp/ours/data" "$tmp/ours/home"
unset MODEXP_TOKEN_CONF MODEXP_TOKEN_LOG_LEVEL
if [[ -n "${BENCH_ENGINE:-}" ]]; then export MODEXP_TOKEN_ENGINE=$BENCH_ENGINE; else unset MODEXP_TOKEN_ENGINE; fi
export XDG_DATA_HOME=$tmp/ours/data
export MODEXP_TOKEN_LOG=$tmp/ours/module.log
export HOME=$tmp/ours/home

# Header: the CPU features seen and the software engine's limb kernel, as
# the module selects it (same CPU, same MODEXP_KERNEL).
cli=$root/build/modexp-token
{
	echo "# $(uname -m), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
	if [[ -x $cli ]]; then
		"$cli" engine info 2>&1 | sed 's/^/# /' || true
	else
		echo "# engine info: $cli not built (make build)"
	fi
} >"$OUT/bench.txt"

status=0
"${pqlib[@]}" -tsv "$OUT/pqlib-before.tsv" >/dev/null || echo "run.sh: pqlib failed" >&2
"$OUT/p11bench" \
	--name ModExp --module "$tmp/lib/libmodexp-pkcs11.so" --label bench-ours --pin 123456 --so-pin 87654321 \
	--name2 SoftHSMv2 --module2 "$SOFTHSM" --label2 bench-softhsm --pin2 123456 --so-pin2 87654321 \
	--seconds "${BENCH_SECONDS:-1}" --threads "${BENCH_THREADS:-1,2}" --rounds "${BENCH_ROUNDS:-4}" \
	${BENCH_ONLY:+--only "$BENCH_ONLY"} --tsv "$OUT/bench.tsv" "$@" >>"$OUT/bench.txt" || status=$?

# openssl speed rsa2048 at each thread count (-multi T forks T processes),
# after the cells: sign/s over all processes in wall-clock time (-elapsed;
# without it a single process reports per CPU-second of user time), and
# sign operations per CPU-second, the CPU read with the shell's time
# (speed signs for BENCH_SECONDS, then verifies as long: half its CPU is
# counted as signing's).
# openssl_speed THREADS TSV TXT: openssl speed -multi T rsa2048 at each
# thread count T of the comma-separated THREADS; rows appended to TXT, the
# TSV (threads, sign_per_s, sign_per_cpu_s) written anew.
openssl_speed() {
	local secs=${BENCH_SECONDS:-1} t line sign percpu cpu
	secs=${secs%.*}
	((secs >= 1)) || secs=1
	{
		echo
		echo "# openssl speed rsa2048 (OpenSSL $(openssl version | cut -d' ' -f2)), ${secs} s of signing per process"
		printf '%-34s %3s %14s %14s\n' "operation" "thr" "sign/s (wall)" "sign/CPU-s"
	} >>"$3"
	printf 'threads\tsign_per_s\tsign_per_cpu_s\n' >"$2"
	IFS=, read -r -a threads <<<"$1"
	for t in "${threads[@]}"; do
		args=(speed -elapsed -seconds "$secs" -mr)
		((t > 1)) && args+=(-multi "$t")
		args+=(rsa2048)
		cpu=$({ TIMEFORMAT='%3U %3S'; time openssl "${args[@]}" >"$tmp/openssl.out" 2>/dev/null; } 2>&1) || true
		line=$(grep '^+F2:' "$tmp/openssl.out" | tail -1 || true)
		[[ -n $line ]] || { echo "run.sh: openssl speed -multi $t gave no result" >&2; continue; }
		read -r sign percpu < <(awk -v l="$line" -v c="$cpu" -v s="$secs" 'BEGIN {
			split(l, f, ":"); split(c, u, " "); cpu = (u[1] + u[2]) / 2
			printf "%.0f %.0f\n", f[4], (cpu > 0 ? f[4] * s / cpu : 0) }')
		printf '%-34s %3d %14s %14s\n' "openssl speed rsa2048 sign" "$t" "$sign" "$percpu" >>"$3"
		printf '%d\t%s\t%s\n' "$t" "$sign" "$percpu" >>"$2"
	done
}

openssl_default=0
if [[ -z "${BENCH_ONLY:-}" || ",${BENCH_ONLY}," == *rsa2048,* || ",${BENCH_ONLY}," == *rsa2048-sign* || ",${BENCH_ONLY}," == *,sign* ]]; then openssl_default=1; fi
have_openssl=0
command -v openssl >/dev/null && have_openssl=1
if [[ "${BENCH_OPENSSL:-$openssl_default}" == 1 && $have_openssl == 1 ]]; then
	openssl_speed "${BENCH_THREADS:-1,2}" "$OUT/openssl.tsv" "$OUT/bench.txt"
fi

# The concurrency sweep: RSA-2048 PKCS#1 signing at each of
# BENCH_SWEEP_THREADS threads, ours and SoftHSMv2 alternating as above,
# then openssl speed -multi T rsa2048 at each T right after, in the same
# run; the ratio of our 8-thread row to `openssl speed -multi 2` (two
# processes: the machine's two cores) printed, and the three drawn
# against the thread count in sweep.svg.
if [[ "${BENCH_SWEEP:-$openssl_default}" == 1 ]]; then
	sweep_threads=${BENCH_SWEEP_THREADS:-1,2,4,8,16}
	{
		echo
		echo "# concurrency sweep: RSA-2048 sign SHA256-RSA-PKCS at $sweep_threads threads"
	} >"$OUT/sweep.txt"
	"$OUT/p11bench" \
		--name ModExp --module "$tmp/lib/libmodexp-pkcs11.so" --label bench-ours --pin 123456 --so-pin 87654321 \
		--name2 SoftHSMv2 --module2 "$SOFTHSM" --label2 bench-softhsm --pin2 123456 --so-pin2 87654321 \
		--seconds "${BENCH_SECONDS:-1}" --threads "$sweep_threads" --rounds "${BENCH_ROUNDS:-4}" \
		--only rsa2048-sign-pkcs1 --tsv "$OUT/sweep.tsv" "$@" >>"$OUT/sweep.txt" || status=$?
	if [[ $have_openssl == 1 ]]; then
		ot=$sweep_threads
		[[ ",$ot," == *,2,* ]] || ot=$ot,2
		openssl_speed "$ot" "$OUT/sweep-openssl.tsv" "$OUT/sweep.txt"
		# Ours at 8 threads against openssl speed -multi 2, wall and per CPU.
		awk -F'\t' 'FNR == 1 { next } FILENAME ~ /openssl/ { if ($1 == 2) { o = $2; oc = $3 }; next }
			$3 == 8 { m = $4; mc = $8 }
			END { if (m && o) printf "\nours at 8 threads / openssl speed -multi 2 rsa2048: %.0f / %.0f sign/s = %.2f (wall); %.0f / %.0f sign/CPU-s = %.2f (per CPU)\n",
				m, o, m / o, mc, oc, (oc ? mc / oc : 0) }' "$OUT/sweep.tsv" "$OUT/sweep-openssl.tsv" >>"$OUT/sweep.txt"
	fi
	if [[ -s "$OUT/sweep.tsv" ]]; then
		ossl=()
		[[ -s "$OUT/sweep-openssl.tsv" ]] && ossl=(-openssl "$OUT/sweep-openssl.tsv")
		(cd "$root" && ${GO:-go} run ./test/bench/benchchart -sweep "${ossl[@]}" -o "$OUT/sweep.svg" "$OUT/sweep.tsv") ||
			echo "run.sh: the sweep chart could not be drawn" >&2
	fi
fi

cat "$OUT/bench.txt"
if [[ -s "$OUT/sweep.txt" ]]; then
	cat "$OUT/sweep.txt"
	[[ -s "$OUT/sweep.svg" ]] && echo "# sweep chart: $OUT/sweep.svg"
fi
if [[ -s "$OUT/bench.tsv" ]]; then
	echo
	echo "# TSV ($OUT/bench.tsv)"
	cat "$OUT/bench.tsv"
	# The same table as a bar chart, beside the TSV.
	if (cd "$root" && ${GO:-go} run ./test/bench/benchchart -o "$OUT/bench.svg" "$OUT/bench.tsv"); then
		echo
		echo "# chart: $OUT/bench.svg"
	else
		echo "run.sh: the chart could not be drawn (the table above stands)" >&2
	fi
fi
# The post-quantum, Ed448 and X25519 rows beside their libraries alone,
# run right before and right after the module's (the mean of the two).
if [[ -s "$OUT/bench.tsv" ]]; then
	"${pqlib[@]}" -before "$OUT/pqlib-before.tsv" -ours "$OUT/bench.tsv" -tsv "$OUT/pqlib.tsv" >"$OUT/pqlib.txt" ||
		echo "run.sh: pqlib failed (the table above stands)" >&2
	if [[ ",${BENCH_ONLY:-x25519}," == *x25519* ]] && command -v openssl >/dev/null; then
		threads=${BENCH_THREADS:-1,2} secs=${BENCH_SECONDS:-1}
		secs=${secs%.*}
		[[ ${secs:-0} -ge 1 ]] || secs=1 # openssl speed takes whole seconds
		for t in ${threads//,/ }; do
			multi=()
			[[ $t == 1 ]] || multi=(-multi "$t")
			echo "# openssl speed ecdhx25519, $t process(es): $(openssl speed -seconds "$secs" "${multi[@]}" ecdhx25519 2>/dev/null | grep -i 'X25519' | tail -1 | sed 's/  */ /g')"
		done >>"$OUT/pqlib.txt"
	fi
	cat "$OUT/pqlib.txt"
fi
if [[ -f "$tmp/ours/module.log" ]]; then cp "$tmp/ours/module.log" "$OUT/module.log"; fi
case $status in
	0) ;;
	1) echo "run.sh: some calls failed or a signature check failed (see notes above)" >&2 ;;
	3) echo "run.sh: a call did not return in time (see stderr above)" >&2 ;;
	*) echo "run.sh: p11bench exited with status $status" >&2 ;;
esac
exit "$status"
