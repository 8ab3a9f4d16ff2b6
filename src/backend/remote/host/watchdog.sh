read _ignored
tag="$1"
if printf 'a\0' | grep -qzxF a 2>/dev/null; then z=1; else z=; fi
start=$(date +%s 2>/dev/null)
passes=0
quiet=0
while :; do
  if [ -n "$z" ]; then
    list=$(grep -lzxF -e "$tag" /proc/[0-9]*/environ 2>/dev/null)
  else
    list=
    for f in /proc/[0-9]*/environ; do
      [ -r "$f" ] && tr '\0' '\n' < "$f" 2>/dev/null | grep -qxF -e "$tag" && list="$list $f"
    done
  fi
  found=
  for f in $list; do
    p=${f#/proc/}; p=${p%/environ}
    [ "$p" != "$$" ] && kill -9 "$p" 2>/dev/null && found=1
  done
  if [ -z "$found" ]; then
    # A tagged process between its old and new image (execve) has no environment to read yet, so
    # one pass that finds nothing is not the end: look again a few times, a moment apart.
    quiet=$((quiet + 1))
    [ "$quiet" -ge @@WATCHDOG_QUIET_PASSES@@ ] && break
    sleep 0.25 2>/dev/null || sleep 1
  else
    quiet=0
  fi
  passes=$((passes + 1))
  now=$(date +%s 2>/dev/null)
  case "$start:$now" in
    *[!0-9:]* | :* | *:) [ $passes -ge @@WATCHDOG_PASSES@@ ] && break ;;
    *) [ $((now - start)) -ge @@WATCHDOG_SECONDS@@ ] && break ;;
  esac
done
