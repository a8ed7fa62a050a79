# Sourced by end-to-end scripts: `check NAME COMMAND...` prints "ok   NAME" when the command
# succeeds and "FAIL NAME" otherwise, counting failures in $fails for the script's exit status;
# `fail MESSAGE` prints "FAIL: MESSAGE" and ends the script at once.
fails=0
check() {
  local name=$1
  shift
  if "$@"; then echo "ok   $name"; else
    echo "FAIL $name"
    fails=$((fails + 1))
  fi
}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
