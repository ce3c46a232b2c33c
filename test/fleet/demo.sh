#!/usr/bin/env bash
# make demo-fleet: a local three-member etcd cluster (etcd's embeddable
# server, keystore/etcdtest/member), two "hosts" (two module
# configurations with their own logs, one token in etcd), a key made on
# host A with the CLI and used by pkcs11-tool on host B, its signature
# verified by openssl. Everything in build/demo-fleet; the members are
# stopped at the end (KEEP=1 leaves them running). FLEET_CLI and
# FLEET_MEMBER name a CLI and a member program already built (the test
# does; default: build/modexp-token, and the member built here).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
D=$ROOT/build/demo-fleet
LIB=$ROOT/build/libmodexp-pkcs11-fleet.so
CLI=${FLEET_CLI:-$ROOT/build/modexp-token}
rm -rf "$D" && mkdir -p "$D"
MEMBER=${FLEET_MEMBER:-}
if [ -z "$MEMBER" ]; then
	MEMBER=$D/member
	go build -tags modexp_etcd -o "$MEMBER" ./keystore/etcdtest/member
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
initial="" endpoints=""
declare -a client peer
for i in 0 1 2; do
	client[$i]=http://127.0.0.1:$(free_port)
	peer[$i]=http://127.0.0.1:$(free_port)
	initial+="${initial:+,}m$i=${peer[$i]}"
	endpoints+="${endpoints:+, }\"${client[$i]}\""
done
pids=()
stop() { [ -n "${KEEP:-}" ] || kill "${pids[@]}" 2>/dev/null || true; }
trap stop EXIT
for i in 0 1 2; do
	mkdir -p "$D/m$i"
	"$MEMBER" "$D/m$i" "m$i" "${client[$i]}" "${peer[$i]}" "$initial" > "$D/m$i.out" 2>&1 &
	pids+=($!)
done
for i in 0 1 2; do
	for _ in $(seq 1200); do grep -q ready "$D/m$i.out" && break; sleep 0.1; done # up to 2 minutes
	grep -q ready "$D/m$i.out" || { echo "member m$i did not start:"; cat "$D/m$i.out"; exit 1; }
done
echo "cluster: $endpoints"

for h in a b; do
	cat > "$D/host-$h.toml" <<CONF
log = "$D/host-$h.log"

[[slot]]
label = "fleet"
engine = "soft"
etcd_endpoints = [$endpoints]
etcd_prefix = "/modexp/demo/"
CONF
done
export MODEXP_TOKEN_SO_PIN=87654321 MODEXP_TOKEN_PIN=123456
MODEXP_TOKEN_CONF=$D/host-a.toml "$CLI" init --label fleet --yes
MODEXP_TOKEN_CONF=$D/host-a.toml "$CLI" keys generate --type ec:P-256 --label fleet-key
printf 'hello, fleet\n' > "$D/msg.txt"
P11B=(env MODEXP_TOKEN_CONF="$D/host-b.toml" pkcs11-tool --module "$LIB")
"${P11B[@]}" --login --pin 123456 --sign --label fleet-key --mechanism ECDSA-SHA256 --signature-format openssl \
	--input-file "$D/msg.txt" --output-file "$D/msg.sig"
"${P11B[@]}" --read-object --type pubkey --label fleet-key --output-file "$D/pub.der"
openssl pkey -pubin -inform DER -in "$D/pub.der" -out "$D/pub.pem"
openssl dgst -sha256 -verify "$D/pub.pem" -signature "$D/msg.sig" "$D/msg.txt"
echo
echo "A key made on host A ($D/host-a.toml) signed on host B ($D/host-b.toml)."
