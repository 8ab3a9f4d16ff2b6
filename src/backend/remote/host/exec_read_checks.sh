LC_ALL=C; export LC_ALL
if [ -L "$1" ]; then exit @@EXIT_ELOOP@@; fi
if [ ! -e "$1" ]; then exit @@EXIT_ENOENT@@; fi
if [ -d "$1" ]; then exit @@EXIT_EISDIR@@; fi
