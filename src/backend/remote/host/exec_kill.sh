# Kill a command's process group (keel's abort or timeout of it, from another call).
k_kill "$1"
