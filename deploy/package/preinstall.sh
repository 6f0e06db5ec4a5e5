#!/bin/sh
# The daemon's own system user; the shoe's serial port and GPIO through
# its groups. Nothing is changed on an upgrade but what is missing.
set -e
if ! getent group livetable >/dev/null; then
	addgroup --system livetable >/dev/null
fi
if ! getent passwd livetable >/dev/null; then
	adduser --system --ingroup livetable --no-create-home --home /nonexistent \
		--shell /usr/sbin/nologin --gecos "livetable table daemon" livetable >/dev/null
fi
for g in dialout gpio; do
	if getent group "$g" >/dev/null; then
		adduser livetable "$g" >/dev/null 2>&1 || true
	fi
done
exit 0
