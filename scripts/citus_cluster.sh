#!/usr/bin/env bash
# A throwaway Citus cluster on loopback ports: a coordinator and two workers,
# each an initdb under a temporary directory, shared_preload_libraries=citus.
#
#   scripts/citus_cluster.sh test [pytest args...]   run the suite against the coordinator
#   scripts/citus_cluster.sh shell                   start it, print its URL, wait for Ctrl-C
#
# Needs the citus extension installed for this machine's PostgreSQL (this
# script builds nothing: see docs/SCALING.md). Without it, it says so and
# exits 2. Everything it starts is stopped and deleted on exit.
set -euo pipefail

MODE=${1:-test}
shift || true
PG_BIN=$(pg_config --bindir)
EXT_DIR="$(pg_config --sharedir)/extension"
if [[ ! -f "$EXT_DIR/citus.control" ]]; then
    echo "make test-citus: the citus extension is not installed for $(pg_config --version)" >&2
    echo "  (no $EXT_DIR/citus.control). Build Citus from its source and install it;" >&2
    echo "  docs/SCALING.md says how. Nothing was run." >&2
    exit 2
fi

# initdb refuses to run as root: the clusters belong to postgres then.
RUN_AS=()
if [[ $(id -u) -eq 0 ]]; then
    RUN_AS=(runuser -u postgres --)
fi

BASE=$(mktemp -d /tmp/citus-cluster.XXXXXX)
chmod 755 "$BASE"
[[ ${#RUN_AS[@]} -gt 0 ]] && chown postgres "$BASE"
NODES=(coordinator worker1 worker2)
declare -A PORT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

stop() {
    for node in "${NODES[@]}"; do
        if [[ -f "$BASE/$node/postmaster.pid" ]]; then
            "${RUN_AS[@]}" "$PG_BIN/pg_ctl" -D "$BASE/$node" -m immediate stop >/dev/null 2>&1 || true
        fi
    done
    rm -rf "$BASE"
}
trap stop EXIT

for node in "${NODES[@]}"; do
    PORT[$node]=$(free_port)
    "${RUN_AS[@]}" "$PG_BIN/initdb" -D "$BASE/$node" -U postgres --auth=trust \
        --locale=C.UTF-8 --encoding=UTF8 >/dev/null
    cat >>"$BASE/$node/postgresql.conf" <<EOF
port = ${PORT[$node]}
listen_addresses = '127.0.0.1'
unix_socket_directories = '$BASE'
shared_preload_libraries = 'citus'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 128MB
max_prepared_transactions = 100
# A read across shards (a page's posts by id, the pull of many authors) runs
# over at most 4 connections per worker, kept open between statements: with
# Citus's defaults (16, 1 kept) each such read opened and closed up to 15
# connections per worker (a cached home page 100-250 ms instead of 40-75 ms
# on the bench world, docs/SCALING.md).
citus.max_adaptive_executor_pool_size = 4
citus.max_cached_conns_per_worker = 4
EOF
    "${RUN_AS[@]}" "$PG_BIN/pg_ctl" -D "$BASE/$node" -l "$BASE/$node.log" -w start >/dev/null
done

COORD=${PORT[coordinator]}
psql_on() {  # psql_on PORT DB SQL
    psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$1" -U postgres -d "$2" -c "$3" >/dev/null
}

# pytest-django keeps (--reuse-db) the test database prepared here: it must
# exist on every node with the extension, and the coordinator must know the
# workers, before the migrations distribute the tables.
DB=feed_citus
TEST_DB=test_$DB
for db in "$DB" "$TEST_DB"; do
    for node in "${NODES[@]}"; do
        psql_on "${PORT[$node]}" postgres "CREATE DATABASE $db"
        psql_on "${PORT[$node]}" "$db" "CREATE EXTENSION citus"
    done
    psql_on "$COORD" "$db" "SELECT citus_set_coordinator_host('127.0.0.1', $COORD)"
    for node in worker1 worker2; do
        psql_on "$COORD" "$db" "SELECT citus_add_node('127.0.0.1', ${PORT[$node]})"
    done
done
URL="postgres://postgres@127.0.0.1:$COORD/$DB"
echo "Citus coordinator on 127.0.0.1:$COORD (workers ${PORT[worker1]}, ${PORT[worker2]}), $URL"

case "$MODE" in
    test)
        # plain_postgresql: tests of SQL the cluster never runs (pyproject.toml).
        DATABASE_URL=$URL RATELIMIT_ENABLED=0 .venv/bin/pytest -p no:cacheprovider --reuse-db \
            -m "not plain_postgresql" "$@"
        ;;
    shell)
        echo "Ctrl-C stops and deletes it."
        while sleep 3600; do :; done
        ;;
    *)
        echo "usage: $0 test [pytest args] | shell" >&2
        exit 64
        ;;
esac
