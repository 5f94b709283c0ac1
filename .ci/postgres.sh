#!/usr/bin/env bash
# Starts and stops a PostgreSQL of the tests' own, from Debian's packages,
# for the history store's tests (engine/pgtest).
#
#   .ci/postgres.sh start        prints LLMLOAD_POSTGRES=postgres://...
#                                and LLMLOAD_POSTGRES_DATA=DIR
#   .ci/postgres.sh stop DIR     stops it and removes its directory
#
# The lines are assignments, not exports (.ci/run's export_env exports
# them); from a shell: set -a; eval "$(.ci/postgres.sh start)"; set +a
#
# start installs Debian's postgresql when missing (as root; Debian's own
# cluster is not created), makes a data directory in a new temporary
# directory, and runs the server on 127.0.0.1 only, on a free port, with
# its unix socket in that temporary directory. Host connections need a
# password (scram-sha-256); the superuser's is random and never printed.
# The role llmload (LOGIN CREATEDB, a random password) owns the database
# llmload, and LLMLOAD_POSTGRES names both. A throwaway instance: fsync
# is off. initdb and postgres refuse to run as root, so as root they run
# as Debian's postgres user. Only the KEY=value lines go to stdout.
set -euo pipefail

log() { echo "postgres.sh: $*" >&2; }
die() { log "$*"; exit 1; }

# install_postgresql adds Debian's postgresql, without creating and starting the
# cluster "main" the package would otherwise make: the tests use their own.
install_postgresql() {
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		die "no PostgreSQL in /usr/lib/postgresql/*/bin, and no apt-get as root to install it (apt-get install postgresql)"
	fi
	log "installing Debian's postgresql"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	apt-get install -y -qq --no-install-recommends postgresql-common >/dev/null
	pg_conftool /etc/postgresql-common/createcluster.conf set create_main_cluster false >&2 || true
	apt-get install -y -qq --no-install-recommends postgresql >/dev/null
}

# bindir prints the newest /usr/lib/postgresql/N/bin holding initdb.
bindir() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5,5n | tail -1)
	[ -n "$d" ] && [ -x "$d/initdb" ] && echo "$d"
}

# as runs a command as the user that owns the instance: the postgres
# user under root, else the caller. Its working directory is the
# instance's, which that user can always enter.
as() {
	if [ "$(id -u)" = 0 ]; then
		(cd "$tmp" && runuser -u postgres -- "$@")
	else
		(cd "$tmp" && "$@")
	fi
}

# freeport prints a loopback port nothing listens on now: the kernel's
# pick through python3 where there is one, else a random one that does
# not accept a connection. start retries on the rare clash.
freeport() {
	if command -v python3 >/dev/null 2>&1; then
		python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' && return
	fi
	local port
	while :; do
		port=$((20000 + RANDOM % 30000))
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
	done
}

random_hex() { od -An -tx1 -N16 /dev/urandom | tr -d ' \n'; }

start() {
	local t0=$SECONDS bin su port pw pwfile data attempt
	bin=$(bindir) || { install_postgresql; bin=$(bindir) || die "no initdb in /usr/lib/postgresql/*/bin after installing postgresql"; }
	if [ "$(id -u)" = 0 ]; then
		id postgres >/dev/null 2>&1 || die "running as root, but there is no postgres user to run the server as (Debian's package creates it)"
		su=postgres
	else
		su=$(id -un)
	fi
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/llmload-pg.XXXXXXXX")
	trap 'start_failed' EXIT
	data=$tmp/data
	[ "$(id -u)" = 0 ] && chown postgres: "$tmp"
	as test -w "$tmp" || die "$su cannot write $tmp (set TMPDIR to a directory it can reach)"

	pwfile=$tmp/superuser-password
	as sh -c 'umask 077; od -An -tx1 -N16 /dev/urandom | tr -d " \n" >"$1"' sh "$pwfile"
	as "$bin/initdb" -D "$data" -U "$su" --pwfile="$pwfile" --auth-local=peer --auth-host=scram-sha-256 \
		--encoding=UTF8 --no-locale --no-sync >"$tmp/initdb.log" 2>&1 ||
		{ cat "$tmp/initdb.log" >&2; die "initdb failed"; }
	rm -f "$pwfile"

	for attempt in 1 2 3 4 5; do
		port=$(freeport)
		as sh -c 'cat >>"$1"' sh "$data/postgresql.conf" <<-EOF
			# .ci/postgres.sh: loopback only, a throwaway instance.
			listen_addresses = '127.0.0.1'
			port = $port
			unix_socket_directories = '$tmp'
			fsync = off
			synchronous_commit = off
			full_page_writes = off
		EOF
		if as "$bin/pg_ctl" -D "$data" -l "$tmp/postgres.log" -w -t 60 start >/dev/null 2>&1; then
			break
		fi
		grep -q 'could not bind\|Address already in use' "$tmp/postgres.log" 2>/dev/null && [ "$attempt" -lt 5 ] ||
			{ tail -30 "$tmp/postgres.log" >&2 2>/dev/null; die "the server did not start (log above)"; }
		log "port $port was taken meanwhile; another"
	done
	as "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -t 30 || die "the server does not accept connections on 127.0.0.1:$port"

	pw=$(random_hex)
	as "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$tmp" -p "$port" -U "$su" -d postgres >&2 <<-EOF ||
		\\set pw '$pw'
		CREATE ROLE llmload LOGIN CREATEDB PASSWORD :'pw';
		CREATE DATABASE llmload OWNER llmload;
	EOF
		die "could not create the role and database llmload"
	trap - EXIT
	log "PostgreSQL $("$bin/postgres" --version | sed 's/^postgres (PostgreSQL) //') on 127.0.0.1:$port, data in $data ($((SECONDS - t0)) s)"
	echo "LLMLOAD_POSTGRES=postgres://llmload:$pw@127.0.0.1:$port/llmload?sslmode=disable"
	echo "LLMLOAD_POSTGRES_DATA=$data"
}

# start_failed leaves nothing behind from a start that did not finish.
start_failed() {
	local rc=$?
	[ -n "${tmp:-}" ] || return
	[ -f "$tmp/data/postmaster.pid" ] && as "$(bindir)/pg_ctl" -D "$tmp/data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$tmp"
	exit "$rc"
}

stop() {
	local data=${1:-} bin
	[ -n "$data" ] || die "usage: $0 stop DATADIR (the LLMLOAD_POSTGRES_DATA that start printed)"
	tmp=$(dirname "$data")
	case $(basename "$tmp")/$(basename "$data") in
	llmload-pg.*/data) ;;
	*) die "$data is not a data directory this script made (.../llmload-pg.XXXXXXXX/data): not touching it" ;;
	esac
	if [ ! -d "$tmp" ]; then
		log "$tmp is gone already"
		return
	fi
	if [ -f "$data/postmaster.pid" ] && [ -f "$data/PG_VERSION" ]; then
		bin=/usr/lib/postgresql/$(cat "$data/PG_VERSION")/bin
		as "$bin/pg_ctl" -D "$data" -m fast -w -t 60 stop >/dev/null ||
			die "pg_ctl stop failed on $data (still running? see $tmp/postgres.log)"
	fi
	rm -rf "$tmp"
	log "stopped; $tmp removed"
}

tmp=
case ${1:-} in
start) start ;;
stop) stop "${2:-}" ;;
*) die "usage: $0 start | $0 stop DATADIR" ;;
esac
