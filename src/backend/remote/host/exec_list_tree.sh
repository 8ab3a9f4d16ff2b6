LC_ALL=C; export LC_ALL
root=$1 custom=$2
shift 2
command -v base64 >/dev/null 2>&1 || exit 127
if [ -f "$root" ]; then printf 'T\0f\0'; exit 0; fi
if [ ! -d "$root" ]; then
  if [ -e "$root" ]; then exit @@EXIT_ENOTDIR@@; fi
  exit @@EXIT_ENOENT@@
fi
for d do
  case $d in /) p=;; *) p=$d;; esac
  x=
  if [ -e "$p/.git" ]; then printf 'G\0%s\0' "$d"; x=$p/.git/info/exclude; fi
  for f in "$p/$custom" "$p/.ignore" "$p/.gitignore" ${x:+"$x"}; do
    if [ -f "$f" ] && [ -r "$f" ]; then printf 'I\0%s\0' "$f"; base64 -w0 < "$f"; printf '\0'; fi
  done
done
find "$root" -mindepth 1 \( -name .git -printf 'E\0%y\0%s\0%P\0' -prune \) -o -printf 'E\0%y\0%s\0%P\0'
exit 0
