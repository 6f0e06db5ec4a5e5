#!/bin/sh
# Reload systemd's units; restart the tables already running on an
# upgrade (each restarts from its journal and outbox, losing nothing).
# A new install starts nothing: each table needs /etc/livetable/<table>.yaml
# and `systemctl enable --now tabled@<table>` (docs/deploy.md).
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
	if [ "$1" = "configure" ] && [ -n "$2" ]; then
		for unit in $(systemctl list-units --no-legend --state=active 'tabled@*' 2>/dev/null | awk '{print $1}'); do
			systemctl try-restart "$unit" || true
		done
	fi
fi
exit 0
