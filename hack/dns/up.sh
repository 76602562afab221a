#!/usr/bin/env bash
# Starts an authoritative DNS server for the demo and the end-to-end tests: BIND 9 (Debian's
# package) on 127.0.0.1:$CAPO_DNS_PORT (default 15353, TCP and UDP), serving the zone
# $CAPO_DNS_ZONE (default example.com, which holds every endpoint host of the demo and the
# tests), updatable and transferable only with a TSIG key. ExternalDNS (hack/external-dns.sh, run
# by the management plane) publishes the DNSEndpoints the provider writes into it with RFC 2136
# updates. Idempotent: when it is up, prints where and returns. The zone starts empty on every
# start.
#
#   hack/dns/up.sh    then: dig @127.0.0.1 -p 15353 api.demo.capo.example.com A +short
#
# Everything goes under $CAPO_DNS_DIR (default /var/tmp/capo-dns): named.conf, the zone and its
# journal, tsig.key (the key's secret, mode 0600), named.log, and env, which says to the other
# scripts where the server, the zone and the key are. hack/dns/down.sh stops it.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/hack/lib.sh"
dir="${CAPO_DNS_DIR:-/var/tmp/capo-dns}"
port="${CAPO_DNS_PORT:-15353}"
zone="${CAPO_DNS_ZONE:-example.com}"
keyname=capo-external-dns

pid=$(cat "$dir/named.pid" 2>/dev/null || true)
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ -s "$dir/env" ]; then
  log "already running (pid $pid) on 127.0.0.1:$port"
  exit 0
fi
apt_ensure bind9 bind9-utils bind9-dnsutils
mkdir -p "$dir"
rm -f "$dir/env" "$dir"/db.* "$dir/named.pid"
[ -s "$dir/tsig.key" ] || (umask 077 && tsig-keygen -a hmac-sha256 "$keyname" >"$dir/tsig.key")
cat >"$dir/named.conf" <<CONF
include "$dir/tsig.key";
controls { };
options {
    directory "$dir";
    pid-file "$dir/named.pid";
    lock-file "$dir/named.lock";
    session-keyfile "$dir/session.key";
    listen-on port $port { 127.0.0.1; };
    listen-on-v6 { none; };
    recursion no;
    allow-query { 127.0.0.1; };
    allow-transfer { none; };
    dnssec-validation no;
    notify no;
};
zone "$zone" {
    type primary;
    file "$dir/db.$zone";
    allow-update { key "$keyname"; };
    allow-transfer { key "$keyname"; };
};
CONF
cat >"$dir/db.$zone" <<ZONE
\$TTL 60
@   IN SOA ns.$zone. hostmaster.$zone. ( 1 60 60 600 30 )
    IN NS  ns.$zone.
ns  IN A   127.0.0.1
ZONE
named-checkconf "$dir/named.conf"
named-checkzone -q "$zone" "$dir/db.$zone"
setsid nohup /usr/sbin/named -g -4 -c "$dir/named.conf" >"$dir/named.log" 2>&1 </dev/null &
deadline=$((SECONDS + 30))
until dig @127.0.0.1 -p "$port" +tcp +time=1 +tries=1 "$zone" SOA +short 2>/dev/null | grep -q .; do
  [ "$SECONDS" -lt "$deadline" ] || { tail -20 "$dir/named.log" >&2; log "BIND did not answer within 30s"; exit 1; }
  sleep 0.2
done
secret="$(sed -n 's/.*secret "\(.*\)";.*/\1/p' "$dir/tsig.key")"
(umask 077 && printf '%s\n' "$secret" >"$dir/tsig.secret")
cat >"$dir/env" <<ENV
server=127.0.0.1
port=$port
zone=$zone
keyname=$keyname
algorithm=hmac-sha256
secret_file=$dir/tsig.secret
ENV
log "BIND serving $zone on 127.0.0.1:$port (logs: $dir/named.log)"
