#!/bin/sh
# Stop the tables on removal (not on upgrade). Their data in
# /var/lib/livetable is kept: a journal is never deleted by a package.
set -e
if [ "$1" = "remove" ] && [ -d /run/systemd/system ]; then
	systemctl stop 'tabled@*' >/dev/null 2>&1 || true
fi
exit 0
