#!/bin/sh
# progress.sh MESSAGE -- COMMAND [ARG...]
#
# Runs COMMAND in the foreground (Ctrl-C reaches it as usual). If it is still
# running after PROGRESS_QUIET seconds (default 2), prints MESSAGE, then the
# elapsed time every PROGRESS_EVERY seconds (default 10) until it ends, so a
# slow first build is never silent. Everything goes to stderr: stdout stays
# the command's, for make targets whose output is captured. Exits with the
# command's status.
set -u

if [ $# -lt 3 ] || [ "$2" != "--" ]; then
	echo "usage: progress.sh MESSAGE -- COMMAND [ARG...]" >&2
	exit 2
fi
msg=$1
shift 2
quiet=${PROGRESS_QUIET:-2}
every=${PROGRESS_EVERY:-10}
start=$(date +%s)
parent=$$

# The ticker. Stopped, it takes its sleep with it; its sleeps write nowhere,
# so none holds a pipe open; and it stops by itself if this script dies.
(
	nap() {
		sleep "$1" >/dev/null 2>&1 &
		naps=$!
		wait "$naps"
	}
	naps=
	trap 'kill $naps 2>/dev/null; exit 0' TERM
	nap "$quiet"
	kill -0 "$parent" 2>/dev/null || exit 0
	echo "$msg" >&2
	while nap "$every" && kill -0 "$parent" 2>/dev/null; do
		echo "  ... $(($(date +%s) - start))s" >&2
	done
) &
ticker=$!

stop_ticker() {
	kill "$ticker" 2>/dev/null
	wait "$ticker" 2>/dev/null
}
trap 'stop_ticker; exit 130' INT
trap 'stop_ticker; exit 143' TERM

"$@"
status=$?
stop_ticker
elapsed=$(($(date +%s) - start))
if [ "$elapsed" -gt "$quiet" ]; then
	if [ "$status" -eq 0 ]; then
		echo "  done in ${elapsed}s" >&2
	else
		echo "  failed after ${elapsed}s" >&2
	fi
fi
exit "$status"
