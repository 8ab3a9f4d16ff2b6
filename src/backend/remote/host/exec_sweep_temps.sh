k_sweep "$@"
