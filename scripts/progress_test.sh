#!/bin/sh
# Tests of progress.sh: sh scripts/progress_test.sh (exit 0 when all pass).
set -u
here=$(cd "$(dirname "$0")" && pwd)
progress="$here/progress.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() {
	echo "FAIL: $*" >&2
	failed=1
}

# A quick command: its output only, on stdout, and its status.
sh "$progress" "building" -- sh -c 'echo out; exit 3' >"$tmp/out" 2>"$tmp/err"
status=$?
[ "$status" -eq 3 ] || fail "quick command: status $status, want 3"
[ "$(cat "$tmp/out")" = "out" ] || fail "quick command: stdout $(cat "$tmp/out"), want out"
[ ! -s "$tmp/err" ] || fail "quick command: said $(cat "$tmp/err"), want nothing"

# A slow command: the message, elapsed lines and the end, all on stderr.
PROGRESS_QUIET=0 PROGRESS_EVERY=1 sh "$progress" "building slowly" -- sh -c 'sleep 3; echo out' >"$tmp/out" 2>"$tmp/err"
status=$?
[ "$status" -eq 0 ] || fail "slow command: status $status, want 0"
[ "$(cat "$tmp/out")" = "out" ] || fail "slow command: stdout $(cat "$tmp/out"), want only the command's"
grep -q '^building slowly$' "$tmp/err" || fail "slow command: no message in $(cat "$tmp/err")"
grep -q '^  \.\.\. [0-9]*s$' "$tmp/err" || fail "slow command: no elapsed line in $(cat "$tmp/err")"
grep -q '^  done in [0-9]*s$' "$tmp/err" || fail "slow command: no closing line in $(cat "$tmp/err")"

# A slow failure says so and keeps the status.
PROGRESS_QUIET=0 PROGRESS_EVERY=1 sh "$progress" "building" -- sh -c 'sleep 2; exit 4' >/dev/null 2>"$tmp/err"
status=$?
[ "$status" -eq 4 ] || fail "slow failure: status $status, want 4"
grep -q '^  failed after [0-9]*s$' "$tmp/err" || fail "slow failure: no closing line in $(cat "$tmp/err")"

# Nothing is left running: the ticker is gone with the script.
PROGRESS_QUIET=0 PROGRESS_EVERY=1 sh "$progress" "gw10-progress-test-marker" -- sleep 1 2>/dev/null
sleep 2
if pgrep -f "gw10-progress-test-marker" >/dev/null 2>&1; then
	fail "a ticker outlived its script"
fi

# Usage errors.
sh "$progress" "no separator" sleep 0 2>/dev/null
[ $? -eq 2 ] || fail "missing -- accepted"

if [ "$failed" -eq 0 ]; then
	echo "progress.sh: all tests pass"
fi
exit "$failed"
