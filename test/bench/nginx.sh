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
#   key    RSA-2048, P-256, Ed25519;  TLS 1.3 and TLS 1.2. An Ed25519
#          cell runs where the OpenSSL engine can load an Ed25519 key
#          (libp11 0.4.12, Debian 12's, cannot: the table says so).
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
#   BENCH_KEYS=list    rsa,ec,ed (default all three)
#   BENCH_TLS=list     1.3,1.2 (default both)
#   BENCH_CONNS=n      concurrent clients (default 4)
#   BENCH_OUT=dir      results (default build/bench-nginx)
#   BENCH_KEEP=1       keep the temporary directory (path printed)
#   BENCH_SMOKE=1      set up, one short verified run per module, no table
#   BENCH_PHASES=list  start,load (default both): start is the cost of an
#                      nginx start in master mode (below), load the cells
#   BENCH_START_WORKERS=n  workers of the start phase (default 16)
#
# The start phase (issue 25): nginx in master mode with
# BENCH_START_WORKERS workers (reuseport, so the kernel spreads the
# connections over all of them), the P-256 key; ours, SoftHSMv2 and the key
# in a file alternate, BENCH_ROUNDS times. Memory: Pss summed over the
# group's processes (/proc/PID/smaps_rollup) plus what our fork image holds
# that no process maps (its memfd's size minus the most any process maps of
# it); CPU: the run time of every thread of the group's processes
# (/proc/PID/task/*/schedstat), split master/workers. Taken (1) when every
# worker is up and idle ("start": nginx workers make no PKCS#11 call before
# their first handshake), (2) after 0.5 s of handshakes from 2 clients,
# which reach every worker ("first use": CPU minus the handshakes' own,
# which a second such run measures) and (3) after a SIGHUP has replaced
# all the workers ("reload").
# The token's part is each figure minus the key-in-a-file server's. Writes
# nginx-start.txt and nginx-start.tsv to BENCH_OUT.
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
KEYS=${BENCH_KEYS:-rsa,ec,ed}
TLSV=${BENCH_TLS:-1.3,1.2}
CONNS=${BENCH_CONNS:-4}
PHASES=${BENCH_PHASES:-start,load}
START_WORKERS=${BENCH_START_WORKERS:-16}
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
ed_skip="" # why there is no Ed25519 cell
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
	for k in rsa ec ed; do
		md=(-sha256)
		if [[ $k == ed ]]; then
			md=()
			p11 --token-label t --login --pin $PIN --keypairgen --key-type EC:edwards25519 --id 03 --label ed
		fi
		# (in a subshell that waits: SoftHSMv2's engine can crash at exit
		# after the failure, and the shell's report goes to the log)
		if ! (OPENSSL_CONF=$tmp/$m.cnf openssl req -new -x509 -engine pkcs11 -keyform engine \
			-key "pkcs11:token=t;object=$k;type=private;pin-value=$PIN" -subj /CN=localhost \
			-addext subjectAltName=DNS:localhost -days 2 "${md[@]}" -out "$tmp/$m-$k.crt" >"$tmp/req.log" 2>&1
			r=$?; exit $r) 2>>"$tmp/req.log"; then
			cat "$tmp/req.log" >>"$tmp/setup.log"
			# libp11 0.4.12's engine knows no EdDSA key, and fails on every
			# key of a token that holds one: no Ed25519 cell, the key goes.
			if [[ $k == ed ]] && grep -q "PKCS11_get_private_key returned NULL" "$tmp/req.log"; then
				ed_skip="the OpenSSL engine ($ENGINE_SO) cannot load an Ed25519 key (PKCS11_get_private_key returned NULL): no Ed25519 cell"
				p11 --token-label t --login --pin $PIN --delete-object --type privkey --label ed
				p11 --token-label t --login --pin $PIN --delete-object --type pubkey --label ed
				continue
			fi
			cat "$tmp/setup.log" >&2
			die "openssl req ($m, $k) failed"
		fi
	done
done
# The baseline's keys, in files.
for k in rsa ec ed; do
	alg=(-newkey rsa:2048 -sha256)
	if [[ $k == ec ]]; then alg=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -sha256); fi
	if [[ $k == ed ]]; then alg=(-newkey ed25519); fi
	openssl req -new -x509 "${alg[@]}" -nodes -keyout "$tmp/file-$k.key" -subj /CN=localhost \
		-addext subjectAltName=DNS:localhost -days 2 -out "$tmp/file-$k.crt" >>"$tmp/setup.log" 2>&1 ||
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

# start_nginx MODULE KEY MODE [WORKERS [LISTEN_OPTIONS]]: starts nginx in
# its own session (so its workers and their helpers share one process
# group) and sets $pid and $port.
start_nginx() {
	local m=$1 k=$2 mode=$3 prefix=$tmp/nginx-$1-$2-$3 v="" try engine="ssl_engine pkcs11;" cnf=$tmp/$1.cnf
	local nworkers=${4:-2} listen_opts=${5:-}
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
worker_processes $nworkers;
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
        listen 127.0.0.1:$port ssl$listen_opts;
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

declare -A pids ports
status=0

# ---- The start phase ----------------------------------------------------
# shellcheck source=proccpu.sh
. "$here/proccpu.sh"

# group_workers G: the pids of master G's nginx children.
group_workers() { ps -o pid=,ppid=,comm= -g "$1" | awk -v g="$1" '$2 == g && $3 == "nginx" { print $1 }'; }

# start_snap G: one line "pss_master_kib pss_workers_kib image_kib
# cpu_master_ns cpu_workers_ns workers copies" for the group of master G:
# image_kib is what the fork image holds that no process maps, copies the
# workers with a fork copy of ours mapped.
start_snap() {
	local g=$1 p pm=0 pw=0 cm=0 cw=0 nw=0 copies=0 mapped=0 x
	declare -A img=()
	for p in $(ps -o pid= -g "$g"); do
		x=$(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null) || continue
		[[ -n $x ]] || continue
		if [[ $p == "$g" ]]; then pm=$((pm + x)); cm=$((cm + $(proc_cpu "$p"))); else
			pw=$((pw + x)); cw=$((cw + $(proc_cpu "$p"))); nw=$((nw + 1)); fi
		local f
		for f in /proc/"$p"/fd/*; do
			case $(readlink "$f" 2>/dev/null) in
			*"modexp-pkcs11 fork copy"* | */\#[0-9]*" (deleted)") img[$(stat -L -c %i "$f")]=$(stat -L -c %b "$f") ;;
			esac
		done
		x=$(awk '/^[0-9a-f]+-[0-9a-f]+ / { m = /modexp-pkcs11 fork copy/ } m && /^Rss:/ { s += $2 } END { print s + 0 }' "/proc/$p/smaps" 2>/dev/null) || x=0
		if ((x > 0)); then copies=$((copies + 1)); fi
		if ((x > mapped)); then mapped=$x; fi
	done
	local ik=0 b
	for b in "${img[@]}"; do ik=$((ik + b / 2)); done # 512-byte blocks
	ik=$((ik > mapped ? ik - mapped : 0))
	echo "$pm $pw $ik $cm $cw $nw $copies"
}

# wait_workers G N [OLD]: until master G has N nginx children, none of
# them in OLD (a space-separated list); 30 s at most.
wait_workers() {
	local i w
	for i in $(seq 300); do
		w=$(group_workers "$1" | xargs)
		if [[ $(wc -w <<<"$w") == "$2" ]]; then
			local fresh=1 o
			for o in ${3:-}; do if [[ " $w " == *" $o "* ]]; then fresh=0; fi; done
			if ((fresh)); then return 0; fi
		fi
		sleep 0.1
	done
	echo "nginx.sh: master $1 has not $2 fresh workers after 30 s ($w)" >&2
	return 1
}

if [[ ,$PHASES, == *,start,* && "${BENCH_SMOKE:-0}" != 1 ]]; then
	printf 'module\tround\tstage\tpss_master_kib\tpss_workers_kib\timage_unmapped_kib\tcpu_master_ms\tcpu_workers_ms\tworkers\tcopies\thandshakes\n' >"$OUT/nginx-start.tsv"
	for ((r = 1; r <= ROUNDS; r++)); do
		order="ours softhsm file"
		if ((r % 2 == 0)); then order="file softhsm ours"; fi
		for m in $order; do
			start_nginx "$m" ec start "$START_WORKERS" " reuseport"
			pids[$m]=$pid ports[$m]=$port
			wait_workers "$pid" "$START_WORKERS" || status=1
			sleep 0.5
			row() { # stage snapshot handshakes
				local a
				read -ra a <<<"$2"
				printf '%s\t%d\t%s\t%s\t%s\t%s\t%.1f\t%.1f\t%s\t%s\t%s\n' "$m" "$r" "$1" "${a[0]}" "${a[1]}" "${a[2]}" \
					"$(bc -l <<<"${a[3]} / 1000000")" "$(bc -l <<<"${a[4]} / 1000000")" "${a[5]}" "${a[6]}" "$3" >>"$OUT/nginx-start.tsv"
			}
			s0=$(start_snap "$pid")
			row start "$s0" 0
			# First use: handshakes reach every worker; a second run gives
			# the handshakes' own CPU.
			h1=$(CONNS=2 load "$m" ec 1.3 0.5 | cut -f1) || status=1
			s1=$(start_snap "$pid")
			h2=$(CONNS=2 load "$m" ec 1.3 0.5 | cut -f1) || status=1
			s2=$(start_snap "$pid")
			row "first-use-run" "$s1" "$(printf '%.0f' "$(bc -l <<<"$h1 * 0.5")")"
			row "steady-run" "$s2" "$(printf '%.0f' "$(bc -l <<<"$h2 * 0.5")")"
			old=$(group_workers "$pid" | xargs)
			c0=$(start_snap "$pid")
			kill -HUP "$pid"
			wait_workers "$pid" "$START_WORKERS" "$old" || status=1
			sleep 0.5
			row reload "$(start_snap "$pid")" 0
			row before-reload "$c0" 0
			stop_nginx "$pid"
		done
	done
	# The table: medians over the rounds; the token's part = module -
	# key in a file. first use: the CPU of the first 1 s of handshakes
	# minus its handshakes at the second run's CPU per handshake.
	awk -F'\t' -v workers="$START_WORKERS" '
	NR == 1 { next }
	{ k = $1 SUBSEP $2; v[k, $3, "mem"] = $4 + $5 + $6; v[k, $3, "cpu"] = $7 + $8; v[k, $3, "cpum"] = $7
	  v[k, $3, "hs"] = $11; v[k, $3, "copies"] = $10; rounds[$1] = rounds[$1] " " $2 }
	function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	function fig(m, what,   n, i, r, k, x, a, s0, s1, s2, c0) {
		n = split(substr(rounds[m], 2), r, " ")
		for (i = 1; i <= n; i++) {
			k = m SUBSEP r[i]
			if (what == "start mem") x = v[k, "start", "mem"]
			if (what == "start cpu") x = v[k, "start", "cpu"]
			if (what == "use mem") x = v[k, "steady-run", "mem"]
			if (what == "use cpu") {
				s1 = v[k, "first-use-run", "cpu"] - v[k, "start", "cpu"]
				s2 = v[k, "steady-run", "cpu"] - v[k, "first-use-run", "cpu"]
				x = s1 - (v[k, "steady-run", "hs"] > 0 ? v[k, "first-use-run", "hs"] * s2 / v[k, "steady-run", "hs"] : 0)
			}
			if (what == "reload mem") x = v[k, "reload", "mem"]
			if (what == "reload cpu") x = v[k, "reload", "cpu"] - v[k, "before-reload", "cpum"]
			if (what == "copies") x = v[k, "steady-run", "copies"]
			a[i] = x
		}
		return med(a, n)
	}
	END {
		print "| stage (" workers " workers, medians) | ours | SoftHSMv2 | key in a file | token part: ours | token part: SoftHSMv2 | ratio |"
		print "|---|---:|---:|---:|---:|---:|---:|"
		split("start mem,start cpu,use mem,use cpu,reload mem,reload cpu", st, ",")
		name["start mem"] = "start: memory (MB)"; name["start cpu"] = "start: CPU (ms)"
		name["use mem"] = "after first use: memory (MB)"; name["use cpu"] = "first use: CPU beyond the handshakes (ms)"
		name["reload mem"] = "after reload: memory (MB)"; name["reload cpu"] = "reload: CPU, master + new workers (ms)"
		for (i = 1; i <= 6; i++) {
			w = st[i]; d = (w ~ /mem/) ? 1024 : 1
			o = fig("ours", w) / d; s = fig("softhsm", w) / d; f = fig("file", w) / d
			po = o - f; ps = s - f
			printf "| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %s |\n", name[w], o, s, f, po, ps, (ps > 0.05 ? sprintf("%.1fx", po / ps) : "n/a")
		}
		printf "| workers with a copy of ours loaded after first use | %d of %d | | | | | |\n", fig("ours", "copies"), workers
	}' "$OUT/nginx-start.tsv" >"$OUT/nginx-start.txt"
	echo "# nginx start, master mode, $START_WORKERS workers, P-256 key, $ROUNDS rounds alternating; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/nginx-start.txt"
	cat "$OUT/nginx-start.txt" >&2
fi
if [[ ,$PHASES, != *,load,* ]]; then exit "$status"; fi

cpus=$(nproc)
{
	echo "# nginx benchmark: $(uname -m), $cpus CPUs, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
	echo "# $(nginx -v 2>&1), $(openssl version), our module $OURS ($(stat -c '%y' "$OURS" | cut -d. -f1)), SoftHSMv2 $SOFTHSM"
	if [[ -x $root/build/modexp-token ]]; then "$root/build/modexp-token" engine info 2>&1 | sed 's/^/# /' || true; fi
	echo "# ${SECONDS_PER_RUN} s per run, $ROUNDS runs per module and cell (alternating), $CONNS clients; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/nginx.txt"
cat "$OUT/nginx.txt" >&2
printf 'mode\tkey\ttls\tmodule\tround\ths_per_s\tp50_ms\tp99_ms\tfailures\tcpu_master_ms\tcpu_workers_ms\tcpu_helpers_ms\tcpu_total_ms\ths_per_cpu_s\n' >"$OUT/nginx.tsv"

IFS=, read -ra mode_list <<<"$MODES"
IFS=, read -ra key_list <<<"$KEYS"
IFS=, read -ra tls_list <<<"$TLSV"
for mode in "${mode_list[@]}"; do
	for k in "${key_list[@]}"; do
		if [[ $k == ed && -n $ed_skip ]]; then
			echo "nginx.sh: $mode, Ed25519: skipped: $ed_skip" >&2
			continue
		fi
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
	keyname["rsa"] = "RSA-2048"; keyname["ec"] = "P-256"; keyname["ed"] = "Ed25519"
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
if [[ -n $ed_skip && ,$KEYS, == *,ed,* ]]; then echo "# Ed25519: $ed_skip" >>"$OUT/nginx.txt"; fi
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/nginx.txt"
echo
cat "$OUT/nginx.txt"
echo
echo "# TSV ($OUT/nginx.tsv)"
cat "$OUT/nginx.tsv"
exit "$status"
