p=$1
if [ ! -e "$p" ] && [ ! -L "$p" ]; then exit @@EXIT_ENOENT@@; fi
if [ -d "$p" ] && [ ! -L "$p" ]; then exit @@EXIT_EISDIR@@; fi
if [ -n "$3" ]; then [ "$(ident "$p")" = "$3" ] || exit @@EXIT_CHANGED@@; fi
rm -f -- "$p" || exit 1
sync -- "$2" 2>/dev/null
exit 0
