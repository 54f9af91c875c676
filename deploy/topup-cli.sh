#!/usr/bin/env bash
# `topup` for the operator of the systemd service: runs a command as the service user, on the
# service's home folder, with the service's settings and keys. Install as /usr/local/bin/topup.
#
# The settings file is read with systemd's EnvironmentFile= rules (dist/service-cli.js), not by a
# shell: `TOPUP_BACKUP_SCHEDULE=0 */6 * * *` (docs/settings.md) is a valid line there and must mean the same here.
# Keys come as the unit's LoadCredential= gives them ($CREDENTIALS_DIRECTORY), never as
# TOPUP_API_KEY_FILE, so a home with accounts.toml works as well as a single-account one.
#
# Keep these in step with deploy/topup.service (User=, Environment=TOPUP_HOME, EnvironmentFile=,
# LoadCredential=, one `name:/path` per credential, separated by spaces). Each can be overridden
# from the environment (the tests run this script as themselves on a temporary home).
set -euo pipefail
user=${TOPUP_SERVICE_USER:-topup}
home=${TOPUP_SERVICE_HOME:-/var/lib/topup}
env_file=${TOPUP_SERVICE_ENV_FILE:-/etc/topup/topup.env}
credentials=${TOPUP_SERVICE_CREDENTIALS:-topup-api-key:/etc/topup/api-key}
node=${TOPUP_SERVICE_NODE:-/usr/bin/node}
program=${TOPUP_SERVICE_PROGRAM:-/opt/topup-runner/dist/service-cli.js}

# Environment= of the unit first: the environment file wins over it, as in systemd.
run=(env "TOPUP_HOME=$home" NODE_ENV=production "TOPUP_SERVICE_ENV_FILE=$env_file"
  "TOPUP_SERVICE_CREDENTIALS=$credentials" "$node" "$program" "$@")
if [ "$(id -un)" = "$user" ]; then
  # Already the service user: drop settings of this shell, as sudo's env_reset does, so the
  # command sees the service's settings only.
  for name in $(compgen -e); do
    case $name in TOPUP_* | CREDENTIALS_DIRECTORY) unset "$name" ;; esac
  done
  exec "${run[@]}"
fi
exec sudo -u "$user" -- "${run[@]}"
