#!/bin/sh
# A "linker" that is fatlink again (as a wrapper script or a copy would be):
# the as-linker test's indirect loop.
exec "$FATLINK" "$@"
