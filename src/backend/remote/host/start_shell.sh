command -v bash >/dev/null 2>&1 && exec bash --noprofile --norc; exec sh
