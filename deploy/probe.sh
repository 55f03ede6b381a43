#!/bin/sh
# The containers' health probes (docker-compose.yml), in the shell: no Python interpreter
# is started per probe. `python -m deploy.health` took 117 ms on a quiet host and 6-9 s
# at load 30-40, past the healthchecks' timeouts, so healthy services flapped to
# unhealthy; curl and the shell take a few milliseconds.
#
#   probe.sh http URL [TIMEOUT_S]            healthy when URL answers below 500
#   probe.sh grpc HOST:PORT SERVICE [TIMEOUT_S]
#                                            grpc.health.v1 Check answers SERVING for SERVICE
#   probe.sh fresh FILE MAX_AGE_S            FILE (or FILE.*) was modified in the last MAX_AGE_S s
#
# Exit 0 when healthy, 1 with the reason on stderr otherwise.
set -u

fail() { echo "unhealthy: $*" >&2; exit 1; }

probe_http() {
    url=$1 timeout=${2:-5}
    code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time "$timeout" "$url") \
        || fail "$url: no answer"
    [ "$code" -ge 100 ] && [ "$code" -lt 500 ] || fail "$url: HTTP $code"
}

probe_grpc() {
    # One unary call over HTTP/2 without TLS: the body is a gRPC frame (no compression,
    # 4-byte length) of HealthCheckRequest{service}, field 1 = 0x0a, its length, its bytes.
    # The answer SERVING is the frame 00 00000002 08 01 (status = 1).
    addr=$1 service=$2 timeout=${3:-3}
    n=${#service}
    [ "$n" -lt 126 ] || fail "service name too long for this probe"
    body=$(mktemp) || fail "no temporary file"
    # shellcheck disable=SC2059
    printf "\\000\\000\\000\\000\\$(printf %03o $((n + 2)))\\012\\$(printf %03o "$n")%s" \
        "$service" >"$body"
    got=$(curl -sS --http2-prior-knowledge --max-time "$timeout" \
        -H 'content-type: application/grpc' -H 'te: trailers' \
        --data-binary "@$body" "http://$addr/grpc.health.v1.Health/Check" | od -An -tx1 | tr -d ' \n')
    rm -f "$body"
    [ "$got" = "00000000020801" ] || fail "$addr $service: not SERVING (answer: ${got:-none})"
}

probe_fresh() {
    # FILE or FILE.SUFFIX, the newest: beat's schedule is a shelve, whose dbm module may
    # add .db or .dat to the name.
    file=$1 max_age=$2 newest=0
    for f in "$file" "$file".*; do
        [ -f "$f" ] || continue
        t=$(stat -c %Y "$f")
        [ "$t" -gt "$newest" ] && newest=$t
    done
    [ "$newest" -gt 0 ] || fail "$file does not exist (yet)"
    age=$(( $(date +%s) - newest ))
    [ "$age" -le "$max_age" ] || fail "$file is ${age} s old (more than ${max_age} s)"
}

case "${1:-}" in
    http) shift; probe_http "$@" ;;
    grpc) shift; probe_grpc "$@" ;;
    fresh) shift; probe_fresh "$@" ;;
    *) echo "usage: probe.sh http URL [T] | grpc ADDR SERVICE [T] | fresh FILE MAX_AGE_S" >&2
       exit 2 ;;
esac
