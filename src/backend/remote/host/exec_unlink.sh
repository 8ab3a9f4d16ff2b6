# shellcheck disable=SC2034 # read by host_lib.sh
k_fmt='@@FMT@@'
p=$1
if [ ! -e "$p" ] && [ ! -L "$p" ]; then exit @@EXIT_ENOENT@@; fi
if [ -d "$p" ] && [ ! -L "$p" ]; then exit @@EXIT_EISDIR@@; fi
k_unlink "$@"
case $? in 0) exit 0 ;; 3) exit @@EXIT_CHANGED@@ ;; *) exit 1 ;; esac
