#!/bin/sh
# PreToolUse hook: refuse `rm` in Bash commands. Exit 2 blocks the call; stderr is the reason
# the model reads as `Error [hook_blocked]: <reason>`.
input=$(cat)
case "$input" in
  *'"command":"rm '* | *'&& rm '* | *'; rm '*)
    echo "rm is blocked in this project; move files to trash/ instead" >&2
    exit 2 ;;
esac
exit 0
