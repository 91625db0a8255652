#!/bin/sh
# The bdi-rl image's entry point: `bdi-rl ARGS` as the owner of /app/runs (the host's ./runs,
# made by whoever runs compose), so that what a run writes belongs to that user, root or not,
# and a user other than root never meets a runs directory the containers cannot write.
set -eu
runs=/app/runs
if [ "$(id -u)" = 0 ] && [ -d "$runs" ]; then
    uid=$(stat -c %u "$runs")
    gid=$(stat -c %g "$runs")
    if [ "$uid" != 0 ]; then
        export HOME=/tmp  # that user has no home in the image (caches, matplotlib's config)
        exec setpriv --reuid="$uid" --regid="$gid" --clear-groups -- bdi-rl "$@"
    fi
fi
exec bdi-rl "$@"
