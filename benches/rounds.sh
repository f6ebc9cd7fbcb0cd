# Sourced by the benches that time commands side by side with `hyperfine -N` on this shared
# machine: ROUNDS rounds of RUNS runs of every command, the order rotating between rounds so
# that load hits every command alike. The caller sets the arrays `cmds` and `names` (same
# length), and WORK, ROUNDS and RUNS; `run_rounds WARMUP` writes round r's results to
# $WORK/h$r.json, which benches/rounds.py reads back (each figure the median over the rounds).
# PREPARE, when set, is run before every run of every command (hyperfine --prepare).
run_rounds() {
  local warmup=$1 n=${#cmds[@]} round k i
  for round in $(seq 1 "$ROUNDS"); do
    local args=()
    for k in $(seq 0 $((n - 1))); do
      i=$(((k + round) % n))
      args+=(-n "${names[$i]}" "${cmds[$i]}")
    done
    echo "round $round/$ROUNDS (load: $(cut -d' ' -f1-3 /proc/loadavg))"
    hyperfine -N --warmup "$warmup" --runs "$RUNS" --style basic ${PREPARE:+--prepare "$PREPARE"} \
      --export-json "$WORK/h$round.json" "${args[@]}" >/dev/null
  done
}
