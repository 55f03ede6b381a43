#!/bin/sh
# Stand-in base images for a machine with no image registry (docs/operations.md,
# "No registry"). The Dockerfile and docker-compose.yml name official images
# (python, postgres, redis, prometheus); where none can be pulled, this builds
# look-alikes from a Debian bookworm root filesystem (debootstrap, then
# `docker import`) and tags them with the names the files expect, so that
# `docker compose build` and `make compose-check` run unchanged.
#
#   sudo sh deploy/standin-images.sh [WORKDIR]     # needs debootstrap, docker, network to a
#                                                  # Debian mirror (MIRROR=...), about 10 min
#   EXTRA_CA="/path/a.crt ..." sh deploy/standin-images.sh   # behind a TLS-inspecting proxy:
#                                                  # the python images trust these too (pip)
#
# What each stand-in is (Debian's packages, not the official images' builds):
#   python:3.11-slim-bookworm  bookworm's python3 (3.11) + venv + pip, `python` -> python3
#   python:3.11-bookworm       the same + gcc and the Python headers (the build stage)
#   postgres:16                bookworm's PostgreSQL 15 with a small entrypoint that reads
#                              POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB like the official one
#   redis:7                    bookworm's redis-server 7.0
#   prom/prometheus:v2.53.0    bookworm's prometheus (2.42) with wget for the healthcheck
# grafana/grafana has no Debian package: it is not made, which is also how the monitoring
# profiles are checked to work without one of their images.
set -eu

WORK=${1:-/var/tmp/digdown-standins}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm

say() { printf '%s standin: %s\n' "$(date -u +%H:%M:%S)" "$*"; }

rootfs() {  # rootfs NAME PACKAGES...: a copy of the base with PACKAGES installed
    name=$1; shift
    dir="$WORK/$name"
    [ -e "$dir/.standin-done" ] && return 0  # made by an earlier run
    rm -rf "$dir"
    cp -a "$WORK/base" "$dir"
    if [ "$#" -gt 0 ]; then
        say "$name: apt-get install $*"
        chroot "$dir" sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $*" \
            >"$WORK/$name.log" 2>&1
        chroot "$dir" sh -c 'apt-get clean && rm -rf /var/lib/apt/lists/*'
    fi
    touch "$dir/.standin-done"
}

import() {  # import NAME TAG [--change ...]: tar the rootfs into the engine as TAG
    name=$1 tag=$2; shift 2
    # An image made before stays (a new one would void every build cache on top of it);
    # FORCE=1 makes them all again.
    if [ -z "${FORCE:-}" ] && docker image inspect "$tag" >/dev/null 2>&1; then
        say "$tag exists: kept"
        return 0
    fi
    if [ -n "${EXTRA_CA:-}" ] && [ -x "$WORK/$name/usr/sbin/update-ca-certificates" ]; then
        for ca in $EXTRA_CA; do
            cp "$ca" "$WORK/$name/usr/local/share/ca-certificates/$(basename "$ca" .crt).crt"
        done
        chroot "$WORK/$name" update-ca-certificates >/dev/null 2>&1
    fi
    say "import $tag"
    tar -C "$WORK/$name" -c . | docker import "$@" - "$tag" >/dev/null
}

mkdir -p "$WORK"
if [ ! -x "$WORK/base/bin/sh" ]; then
    say "debootstrap $SUITE (minbase) from $MIRROR"
    rm -rf "$WORK/base"
    debootstrap --variant=minbase "$SUITE" "$WORK/base" "$MIRROR" >"$WORK/debootstrap.log" 2>&1
    printf 'deb %s %s main\ndeb %s %s-updates main\n' "$MIRROR" "$SUITE" "$MIRROR" "$SUITE" \
        >"$WORK/base/etc/apt/sources.list"
    chroot "$WORK/base" apt-get update >>"$WORK/debootstrap.log" 2>&1
fi


rootfs python-slim python3 python3-venv python3-pip python-is-python3 ca-certificates
# The official images' pip installs into the system Python; Debian's marks it as managed.
rm -f "$WORK"/python-slim/usr/lib/python3*/EXTERNALLY-MANAGED
# Debian's pip reads the system trust store (with EXTRA_CA in it); PIP_CERT says so to any pip.
import python-slim python:3.11-slim-bookworm --change 'ENV LANG=C.UTF-8' --change 'CMD ["python3"]' \
    --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt'

rootfs python-full python3 python3-venv python3-pip python-is-python3 python3-dev gcc libc6-dev \
    ca-certificates
rm -f "$WORK"/python-full/usr/lib/python3*/EXTERNALLY-MANAGED
import python-full python:3.11-bookworm --change 'ENV LANG=C.UTF-8' --change 'CMD ["python3"]' \
    --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt'

rootfs postgres postgresql-15
mkdir -p "$WORK/postgres/usr/local/bin"
cat >"$WORK/postgres/usr/local/bin/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
# The official postgres image's start, reduced: a first start makes the cluster, the
# user and the database from POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB.
set -eu
export PGDATA=${PGDATA:-/var/lib/postgresql/data}
BIN=/usr/lib/postgresql/15/bin
mkdir -p "$PGDATA" /var/run/postgresql
chown -R postgres:postgres "$PGDATA" /var/run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    printf '%s' "${POSTGRES_PASSWORD:?}" >/tmp/pwfile
    chown postgres /tmp/pwfile
    su postgres -c "$BIN/initdb -D $PGDATA -U ${POSTGRES_USER:-postgres} --pwfile=/tmp/pwfile \
        --auth-local=trust --auth-host=scram-sha-256"
    rm -f /tmp/pwfile
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    su postgres -c "$BIN/pg_ctl -D $PGDATA -o '-c listen_addresses=' -w start"
    if [ "${POSTGRES_DB:-postgres}" != postgres ]; then
        su postgres -c "$BIN/createdb -U ${POSTGRES_USER:-postgres} $POSTGRES_DB"
    fi
    su postgres -c "$BIN/pg_ctl -D $PGDATA -m fast -w stop"
fi
exec su postgres -c "exec $BIN/postgres -D $PGDATA -c listen_addresses='*'"
EOF
chmod 755 "$WORK/postgres/usr/local/bin/docker-entrypoint.sh"
ln -sf /usr/lib/postgresql/15/bin/pg_isready "$WORK/postgres/usr/local/bin/pg_isready"
import postgres postgres:16 --change 'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' \
    --change 'ENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'EXPOSE 5432'

rootfs redis redis-server
mkdir -p "$WORK/redis/data" "$WORK/redis/usr/local/bin"
cat >"$WORK/redis/usr/local/bin/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
# As the official redis image: started without a configuration file, Redis answers other
# containers (protected mode off); the compose network is what keeps it private.
if [ "${1:-}" = redis-server ] && [ "${2:-}" != "${2%.conf}" ]; then exec "$@"; fi
if [ "${1:-}" = redis-server ]; then shift; exec redis-server --protected-mode no "$@"; fi
exec "$@"
EOF
chmod 755 "$WORK/redis/usr/local/bin/docker-entrypoint.sh"
import redis redis:7 --change 'WORKDIR /data' --change 'CMD ["redis-server"]' \
    --change 'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' \
    --change 'ENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'EXPOSE 6379'

rootfs prometheus prometheus wget
mkdir -p "$WORK/prometheus/prometheus"
chmod 777 "$WORK/prometheus/prometheus"
import prometheus prom/prometheus:v2.53.0 --change 'ENTRYPOINT ["/usr/bin/prometheus"]' \
    --change 'WORKDIR /prometheus' --change 'USER nobody' \
    --change 'ENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'EXPOSE 9090'

say "done:"
docker images --format '{{.Repository}}:{{.Tag}} {{.Size}}' \
    | grep -E '^(python|postgres|redis|prom/prometheus):' || true
