umask 077; printf %s "$KEEL_IN" >> "$1" && echo "!0"
