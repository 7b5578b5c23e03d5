#!/bin/sh
# launcher-standin.sh TOOL ARGS...: stands in for a launcher of tools on
# other machines (Slurm's srun, a remote-execution client): records its argv
# in $LAUNCH_LOG, then runs the tool here - or fails ($LAUNCH_MODE=fail) or
# hangs ($LAUNCH_MODE=hang) as a lost remote machine would.
echo "$@" >> "${LAUNCH_LOG:-/dev/null}"
case "$LAUNCH_MODE" in
fail) echo "launcher-standin: the remote machine is gone" >&2; exit 3 ;;
hang) exec sleep 600 ;;
esac
exec "$@"
