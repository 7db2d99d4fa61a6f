"""Legacy `nvprof --csv --metrics` exports (per-kernel min/max/avg, no per-launch data)."""
