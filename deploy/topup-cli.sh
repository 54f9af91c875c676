#!/bin/sh
# `topup` for the operator of the systemd service: runs a command as the service user, on the
# service's home folder, with the service's settings and key. Install as /usr/local/bin/topup.
set -eu
exec sudo -u topup /bin/sh -c '
  set -a; . /etc/topup/topup.env; set +a
  export TOPUP_HOME=/var/lib/topup TOPUP_API_KEY_FILE=/etc/topup/api-key
  exec /usr/bin/node /opt/topup-runner/dist/cli.js "$@"
' topup "$@"
