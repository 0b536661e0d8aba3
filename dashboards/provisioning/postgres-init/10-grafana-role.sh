#!/bin/sh
# Run once by the postgres image when it initialises an empty data directory (docker-compose
# mounts this folder at /docker-entrypoint-initdb.d). It gives the SELECT-only role Grafana
# connects as its password; `slamon migrate` (migration 0003) finds the role and grants it
# SELECT. Without this step the role is created by the migration with no password.
# psql quotes the password itself (:'password'): no SQL is built from it in the shell.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
    -v password="$SLAMON_GRAFANA_DB_PASSWORD" <<'SQL'
CREATE ROLE slamon_grafana LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT PASSWORD :'password';
SQL
