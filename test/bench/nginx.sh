#!/usr/bin/env bash
# The whole path under a real server (issue 16): nginx (Debian's, from a
# private prefix, never the system service) with its TLS key on the token
# through libp11's OpenSSL engine, 2 workers, against a load client making
# full TLS handshakes (no session reuse, no tickets) from 4 goroutines on
# loopback (test/bench/tlsload). Ours and SoftHSMv2 alternate (A B B A ...)
# on the same machine, for:
#   mode   master: the key is loaded by the nginx master, which then forks
#                  its workers (each worker is served by its own copy of
#                  ours, docs/FORK.md; SoftHSMv2 is re-initialised by libp11);
#          worker: the key paths hold a variable, so each worker loads the
#                  module and looks the key up on every handshake;
#   key    RSA-2048, P-256;  TLS 1.3 and TLS 1.2.
# A third server keeps its key in a PEM file (no engine, no token): the
# baseline, the CPU a handshake costs nginx and OpenSSL alone.
# Per cell: handshakes/s, p50/p99 latency and the server's CPU per handshake
# split by process (nginx master, nginx workers, helpers: any other process),
# from /proc/<pid>/stat of the server's process group before and after.
# Writes nginx.txt (table) and nginx.tsv (every run) to BENCH_OUT.
#
# Environment (all optional):
#   OURS=path          our module (default build/libmodexp-pkcs11.so)
#   SOFTHSM=path       SoftHSMv2 module (default: found under /usr/lib)
#   BENCH_SECONDS=s    seconds per run (default 3)
#   BENCH_ROUNDS=n     runs per module and cell, alternating (default 2: A B B A)
#   BENCH_MODES=list   master,worker (default both)
#   BENCH_KEYS=list    rsa,ec (default both)
#   BENCH_TLS=list     1.3,1.2 (default both)
#   BENCH_CONNS=n      concurrent clients (default 4)
#   BENCH_OUT=dir      results (default build/bench-nginx)
#   BENCH_KEEP=1       keep the temporary directory (path printed)
#   BENCH_SMOKE=1      set up, one short verified run per module, no table
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
OURS=${OURS:-$root/build/libmodexp-pkcs11.so}
# shellcheck source=softhsm.sh
. "$here/softhsm.sh"
ENGINE_SO=
for c in /usr/lib/x86_64-linux-gnu/engines-3/pkcs11.so /usr/lib/aarch64-linux-gnu/engines-3/pkcs11.so; do
	if [[ -f $c ]]; then ENGINE_SO=$c; break; fi
done
OUT=${BENCH_OUT:-$root/build/bench-nginx}
SECONDS_PER_RUN=${BENCH_SECONDS:-3}
ROUNDS=${BENCH_ROUNDS:-2}
MODES=${BENCH_MODES:-master,worker}
KEYS=${BENCH_KEYS:-rsa,ec}
TLSV=${BENCH_TLS:-1.3,1.2}
CONNS=${BENCH_CONNS:-4}
PIN=123456
SOPIN=87654321

die() { echo "nginx.sh: $*" >&2; exit 2; }
[[ -f $OURS ]] || die "$OURS not found (run make build)"
[[ -n "${SOFTHSM:-}" && -f $SOFTHSM ]] || die "libsofthsm2.so not found (apt-get install softhsm2, or set SOFTHSM)"
[[ -n $ENGINE_SO ]] || die "libp11's engine not found (apt-get install libengine-pkcs11-openssl)"
for t in nginx openssl pkcs11-tool setsid; do
	command -v "$t" >/dev/null || die "$t not installed (make deps)"
done
OURS=$(readlink -f "$OURS")
SOFTHSM=$(readlink -f "$SOFTHSM")
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/modexp-bench-nginx.XXXXXX")
groups=() # process groups of the nginx servers started (their masters' pids)
cleanup() {
	local g
	for g in "${groups[@]}"; do
		kill -KILL -- "-$g" 2>/dev/null || true
	done
	if [[ "${BENCH_KEEP:-0}" == 1 ]]; then
		echo "nginx.sh: kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

(cd "$root" && ${GO:-go} build -o "$OUT/tlsload" ./test/bench/tlsload)

# Our module from a copy (a rebuild during the run must not change it).
mkdir -p "$tmp/lib" "$tmp/ours/data" "$tmp/ours/home"
cp "$OURS" "$tmp/lib/libmodexp-pkcs11.so"
declare -A module=([ours]=$tmp/lib/libmodexp-pkcs11.so [softhsm]=$SOFTHSM)

# Ours: the default configuration (one slot, token file under
# $XDG_DATA_HOME/modexp-token/); SoftHSMv2: its own configuration.
softhsm_config "$tmp/softhsm"
unset MODEXP_TOKEN_CONF MODEXP_TOKEN_LOG_LEVEL MODEXP_TOKEN_ENGINE
export XDG_DATA_HOME=$tmp/ours/data HOME=$tmp/ours/home MODEXP_TOKEN_LOG=$tmp/ours/module.log

user_line=""
if [[ $(id -u) == 0 ]]; then user_line="user root;"; fi # workers must reach the token files in $tmp

# Tokens "t" with an RSA-2048 and a P-256 key each, and a self-signed
# certificate per key made through the engine (the key never leaves).
for m in ours softhsm; do
	p11() { pkcs11-tool --module "${module[$m]}" "$@" >>"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log" >&2; die "pkcs11-tool $* ($m) failed"; }; }
	p11 --init-token --label t --so-pin $SOPIN
	p11 --token-label t --login --login-type so --so-pin $SOPIN --init-pin --pin $PIN
	p11 --token-label t --login --pin $PIN --keypairgen --key-type rsa:2048 --id 01 --label rsa
	p11 --token-label t --login --pin $PIN --keypairgen --key-type EC:prime256v1 --id 02 --label ec
	cat >"$tmp/$m.cnf" <<EOF
openssl_conf = openssl_init

[openssl_init]
engines = engine_section

[engine_section]
pkcs11 = pkcs11_section

[pkcs11_section]
engine_id = pkcs11
dynamic_path = $ENGINE_SO
MODULE_PATH = ${module[$m]}
init = 0
EOF
	for k in rsa ec; do
		OPENSSL_CONF=$tmp/$m.cnf openssl req -new -x509 -engine pkcs11 -keyform engine \
			-key "pkcs11:token=t;object=$k;type=private;pin-value=$PIN" -subj /CN=localhost \
			-addext subjectAltName=DNS:localhost -days 2 -sha256 -out "$tmp/$m-$k.crt" >>"$tmp/setup.log" 2>&1 ||
			{ cat "$tmp/setup.log" >&2; die "openssl req ($m, $k) failed"; }
	done
done
# The baseline's keys, in files.
for k in rsa ec; do
	alg=(-newkey rsa:2048)
	if [[ $k == ec ]]; then alg=(-newkey ec -pkeyopt ec_paramgen_curve:P-256); fi
	openssl req -new -x509 "${alg[@]}" -nodes -keyout "$tmp/file-$k.key" -subj /CN=localhost \
		-addext subjectAltName=DNS:localhost -days 2 -sha256 -out "$tmp/file-$k.crt" >>"$tmp/setup.log" 2>&1 ||
		{ cat "$tmp/setup.log" >&2; die "openssl req (file, $k) failed"; }
done

# free_port prints a loopback port nothing listens on, below the ephemeral
# range (the client's thousands of closed connections hold ports there).
free_port() {
	local p lo
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range || lo=32768
	while :; do
		p=$((10000 + RANDOM % (lo > 12000 ? lo - 10000 : 2000)))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
	done
}

# start_nginx MODULE KEY MODE: starts nginx in its own session (so its
# workers and their helpers share one process group) and sets $pid and $port.
start_nginx() {
	local m=$1 k=$2 mode=$3 prefix=$tmp/nginx-$1-$2-$3 v="" try engine="ssl_engine pkcs11;" cnf=$tmp/$1.cnf
	mkdir -p "$prefix/logs"
	if [[ $mode == worker ]]; then v='$bench_v'; fi
	local keyref="engine:pkcs11:pkcs11:token=t;object=$k;type=private;pin-value=$PIN$v"
	if [[ $m == file ]]; then keyref=$tmp/file-$k.key$v engine="" cnf=/dev/null; fi
	for try in 1 2 3; do
		port=$(free_port)
		: >"$prefix/logs/error.log" # a failed try's bind error is not the run's
		cat >"$prefix/nginx.conf" <<EOF
$user_line
daemon off;
worker_processes 2;
# nginx clears the workers' environment: the modules' configuration must
# reach a worker that loads the module itself (worker mode).
env SOFTHSM2_CONF;
env XDG_DATA_HOME;
env HOME;
env MODEXP_TOKEN_LOG;
pid $prefix/nginx.pid;
error_log $prefix/logs/error.log notice;
$engine
events { worker_connections 256; }
http {
    access_log off;
    map \$ssl_server_name \$bench_v { default ""; }
    server {
        listen 127.0.0.1:$port ssl;
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_session_cache off;
        ssl_session_tickets off;
        ssl_certificate $tmp/$m-$k.crt$v;
        ssl_certificate_key "$keyref";
        location / { return 200 "ok\n"; }
    }
}
EOF
		OPENSSL_CONF=$cnf setsid nginx -p "$prefix" -c "$prefix/nginx.conf" -e "$prefix/logs/error.log" \
			>"$prefix/stdout" 2>&1 </dev/null &
		pid=$!
		groups+=("$pid")
		local i
		for i in $(seq 300); do
			if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
			if ! kill -0 "$pid" 2>/dev/null; then break; fi
			sleep 0.1
		done
		kill -KILL -- "-$pid" 2>/dev/null || true
		if ! grep -q "Address already in use" "$prefix/logs/error.log" "$prefix/stdout" 2>/dev/null; then break; fi
	done
	cat "$prefix/stdout" "$prefix/logs/error.log" >&2 || true
	die "nginx ($m, $k, $mode) did not start"
}

# stop_nginx PID: SIGTERM to the master, then every process of its group
# must end (helpers included); SIGKILL after 10 s.
stop_nginx() {
	local g=$1 i
	kill -TERM "$g" 2>/dev/null || true
	for i in $(seq 100); do
		if ! kill -0 -- "-$g" 2>/dev/null; then wait "$g" 2>/dev/null || true; return 0; fi
		sleep 0.1
	done
	echo "nginx.sh: processes of group $g left 10 s after SIGTERM; killed" >&2
	kill -KILL -- "-$g" 2>/dev/null || true
	wait "$g" 2>/dev/null || true
}

# load MODULE KEY TLS SECONDS: one run against the server of MODULE; prints
# tlsload's TSV fields.
load() {
	"$OUT/tlsload" -addr "127.0.0.1:${ports[$1]}" -ca "$tmp/$1-$2.crt" -key "$2" -tls "$3" \
		-seconds "$4" -conns "$CONNS" -pgid "${pids[$1]}"
}

cpus=$(nproc)
{
	echo "# nginx benchmark: $(uname -m), $cpus CPUs, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
	echo "# $(nginx -v 2>&1), $(openssl version), our module $OURS ($(stat -c '%y' "$OURS" | cut -d. -f1)), SoftHSMv2 $SOFTHSM"
	if [[ -x $root/build/modexp-token ]]; then "$root/build/modexp-token" engine info 2>&1 | sed 's/^/# /' || true; fi
	echo "# ${SECONDS_PER_RUN} s per run, $ROUNDS runs per module and cell (alternating), $CONNS clients; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/nginx.txt"
cat "$OUT/nginx.txt" >&2
printf 'mode\tkey\ttls\tmodule\tround\ths_per_s\tp50_ms\tp99_ms\tfailures\tcpu_master_ms\tcpu_workers_ms\tcpu_helpers_ms\tcpu_total_ms\ths_per_cpu_s\n' >"$OUT/nginx.tsv"

declare -A pids ports
status=0
IFS=, read -ra mode_list <<<"$MODES"
IFS=, read -ra key_list <<<"$KEYS"
IFS=, read -ra tls_list <<<"$TLSV"
for mode in "${mode_list[@]}"; do
	for k in "${key_list[@]}"; do
		for m in ours softhsm file; do
			start_nginx "$m" "$k" "$mode"
			pids[$m]=$pid ports[$m]=$port
			# Warm up: every worker serves (keys looked up).
			load "$m" "$k" 1.3 0.5 >/dev/null || { status=1; echo "nginx.sh: warm-up failed ($m, $k, $mode)" >&2; }
		done
		if [[ "${BENCH_SMOKE:-0}" == 1 ]]; then
			for m in ours softhsm file; do
				for v in "${tls_list[@]}"; do
					load "$m" "$k" "$v" 0.3 >/dev/null || { status=1; echo "nginx.sh: smoke run failed ($m, $k, $mode, TLS $v)" >&2; }
				done
				echo "nginx.sh: $m, $k, $mode: processes: $(ps -o comm= -g "${pids[$m]}" | sort | uniq -c | xargs)" >&2
				# Master mode: ours serves the forked workers in process.
				if [[ $m == ours ]] && ps -o comm= -g "${pids[$m]}" | grep -qv '^nginx$'; then
					status=1
					echo "nginx.sh: a process other than nginx under nginx (ours, $k, $mode)" >&2
				fi
			done
		else
			for v in "${tls_list[@]}"; do
				for ((r = 1; r <= ROUNDS; r++)); do
					order="ours softhsm file"
					if ((r % 2 == 0)); then order="file softhsm ours"; fi
					for m in $order; do
						if line=$(load "$m" "$k" "$v" "$SECONDS_PER_RUN"); then
							printf '%s\t%s\t%s\t%s\t%d\t%s\n' "$mode" "$k" "$v" "$m" "$r" "$line" >>"$OUT/nginx.tsv"
							printf '%s %s TLS%s %-8s round %d: %s\n' "$mode" "$k" "$v" "$m" "$r" "$line" >&2
						else
							status=1
							echo "nginx.sh: run failed ($m, $k, $mode, TLS $v)" >&2
						fi
					done
				done
			done
		fi
		for m in ours softhsm file; do
			stop_nginx "${pids[$m]}"
			prefix=$tmp/nginx-$m-$k-$mode
			if grep -E '\[(alert|emerg|crit)\]|exited on signal' "$prefix/logs/error.log" >&2; then
				status=1
				echo "nginx.sh: ^ in nginx's error log ($m, $k, $mode)" >&2
			fi
		done
	done
done
if [[ -f $tmp/ours/module.log ]]; then cp "$tmp/ours/module.log" "$OUT/module.log"; fi
if [[ "${BENCH_SMOKE:-0}" == 1 ]]; then
	if [[ $status == 0 ]]; then echo "nginx.sh: smoke run passed" >&2; fi
	exit "$status"
fi

# The table: per cell the mean over the runs of each module; ratio =
# ours/SoftHSMv2 in handshakes/s, and in handshakes per server CPU second
# (the figure that holds when the machine is shared). CPU ms per handshake:
# nginx (master+workers) + helpers; "key in a file": the baseline's total.
awk -F'\t' -v cpus="$cpus" '
NR == 1 { next }
{
	c = $1 SUBSEP $2 SUBSEP $3
	if (!(c in seen)) { seen[c] = 1; order[++n] = c }
	k = c SUBSEP $4
	runs[k]++; hs[k] += $6; p99[k] += $8; fail[k] += $9
	ngx[k] += $10 + $11; hlp[k] += $12; tot[k] += $13
}
function f(x) { return sprintf("%.0f", x) }
END {
	keyname["rsa"] = "RSA-2048"; keyname["ec"] = "P-256"
	print "| mode | key | TLS | hs/s ours | hs/s SoftHSMv2 | ratio | p99 ms ours / SoftHSMv2 | CPU ms/hs ours: nginx + helpers | CPU ms/hs SoftHSMv2 | ratio per CPU | CPU ms/hs key in a file |"
	print "|---|---|---|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= n; i++) {
		split(order[i], a, SUBSEP)
		o = order[i] SUBSEP "ours"; s = order[i] SUBSEP "softhsm"; b = order[i] SUBSEP "file"
		if (!runs[o] || !runs[s]) continue
		ho = hs[o] / runs[o]; hsx = hs[s] / runs[s]
		to = tot[o] / runs[o]; ts = tot[s] / runs[s]
		printf "| %s | %s | %s | %s | %s | %.2fx | %.1f / %.1f | %.2f + %.2f = %.2f | %.2f | %s | %s |\n", a[1], keyname[a[2]], a[3],
			f(ho), f(hsx), (hsx > 0 ? ho / hsx : 0), p99[o] / runs[o], p99[s] / runs[s],
			ngx[o] / runs[o], hlp[o] / runs[o], to, ts, (to > 0 ? sprintf("%.2fx", ts / to) : "n/a"),
			(runs[b] ? sprintf("%.2f", tot[b] / runs[b]) : "n/a")
		if (fail[o] + fail[s] > 0) printf "|   | failed handshakes: ours %d, SoftHSMv2 %d |\n", fail[o], fail[s]
	}
}' "$OUT/nginx.tsv" >>"$OUT/nginx.txt"
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/nginx.txt"
echo
cat "$OUT/nginx.txt"
echo
echo "# TSV ($OUT/nginx.tsv)"
cat "$OUT/nginx.tsv"
exit "$status"
