for c do
  case $c in */*) [ -f "$c" ] && [ -x "$c" ] && p=$c || continue ;;
  *) p=$(command -v "$c" 2>/dev/null) || continue ;;
  esac
  "$p" -c 'import sys; sys.exit(sys.version_info < (3, 8))' 2>/dev/null && { printf '%s\n' "$p"; exit 0; }
done
exit 3
