LC_ALL=C; export LC_ALL
set -e
t=$(stat -c '%.9Y' /)
realpath -e -z / >/dev/null
readlink -z / >/dev/null || true
find / -maxdepth 0 -printf '' >/dev/null
printf '' | sha256sum >/dev/null
dd --version >/dev/null 2>&1
ln --help | grep -q -e '--no-target-directory'
mv --help | grep -q -e '--no-target-directory'
command -v bash >/dev/null 2>&1 && b=bash || b=sh
py=
for p in /usr/bin/python3 "$(command -v python3 2>/dev/null || :)"; do
  if [ -n "$p" ] && "$p" -I -S -c 'import os; os.listxattr; os.setxattr' >/dev/null 2>&1; then py=$p; break; fi
done
case $t in *.*) printf 'ok precise %s\n%s' "$b" "$py";; *) printf 'ok coarse %s\n%s' "$b" "$py";; esac
