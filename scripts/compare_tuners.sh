#!/usr/bin/env bash
# Compares DPareto with random search (same budget) and grid search (>= 4x the budget) on one
# pipeline over several seeds, as paper 000 does in §4.3 (Fig. 5/6, Table 2): prints the mean
# hypervolume (w.r.t. (epsilon, error) = (10, 1), the host's definition) of each tuner, the per-seed
# values, and writes two SVGs: mean hypervolume against evaluations (paper 000 Fig. 5, top) and the
# empirical fronts of the three tuners for the first seed (Fig. 6).
#
#   scripts/compare_tuners.sh [PIPELINE] [--seeds N] [--initial K0] [--iterations K] [--out DIR]
#                             [--grid-points P | --grid-pipeline FILE] [--set key=value]...
#                             [--reevaluate K [--reeval-repetitions R]]
#
# PIPELINE (default examples/pipelines/dpareto_svt.yaml) must use the dpareto tuner; its other
# tuner params are replaced.  The grid has P points per dimension (default: the smallest P with
# P^d >= 4 x budget), or is the grid pipeline FILE (a grid over the same problem with its own
# per-dimension values, e.g. 3^4 x 4 = 324 points in 5-D, where P^5 jumps from 243 to 1024); by
# default PIPELINE's sibling <stem>_grid324.yaml when it exists.
#
# --reevaluate K scores each tuner's reported front out of sample: the front's hyperparameters are
# run again (DPareto with initial_trials = pareto_front.csv and no iterations) under K fresh seeds,
# i.e. new data splits and new noise, with R repetitions each (default 20), and the hypervolume of
# the re-scored points is averaged over the K runs.  The in-sample hypervolume favours the tuner
# that evaluates more candidates, because the front keeps the luckiest of many noisy means (the
# winner's curse); the re-scored one does not.  Needs a built tree (scripts/build.sh); DPTUNE
# overrides the binary.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pipeline="$here/examples/pipelines/dpareto_svt.yaml"
seeds=5 initial=16 iterations=64 out="$here/results/compare_tuners" grid_points="" grid_pipeline="" extra=()
reevaluate=0 reeval_repetitions=20
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seeds) seeds="$2"; shift 2 ;;
    --initial) initial="$2"; shift 2 ;;
    --iterations) iterations="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --grid-points) grid_points="$2"; shift 2 ;;
    --grid-pipeline) grid_pipeline="$2"; shift 2 ;;
    --set) extra+=(--set "$2"); shift 2 ;;
    --reevaluate) reevaluate="$2"; shift 2 ;;
    --reeval-repetitions) reeval_repetitions="$2"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    -*) echo "compare_tuners.sh: unknown option $1" >&2; exit 2 ;;
    *) pipeline="$1"; shift ;;
  esac
done
for v in "$seeds" "$initial" "$iterations" "$reevaluate" "$reeval_repetitions"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "compare_tuners.sh: expected a non-negative integer, got '$v'" >&2; exit 2; }
done
dptune="${DPTUNE:-$here/build/bin/dptune}"
[[ -x "$dptune" ]] || { echo "compare_tuners.sh: $dptune not found; build first (scripts/build.sh)" >&2; exit 1; }
budget=$((initial + iterations))
if [[ -z "$grid_pipeline" && -z "$grid_points" && -f "${pipeline%.yaml}_grid324.yaml" ]]; then
  grid_pipeline="${pipeline%.yaml}_grid324.yaml"
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"  # absolute: re-scoring passes paths inside it to dptune

run() {  # run <dir> <seed> <args...> (PIPE overrides the pipeline)
  local dir="$1" seed="$2"; shift 2
  "$dptune" run "${PIPE:-$pipeline}" --seed "$seed" --no-progress -o "$dir" "${extra[@]}" "$@" > "$dir.log" 2>&1 \
    || { echo "compare_tuners.sh: run failed, see $dir.log" >&2; tail -5 "$dir.log" >&2; exit 1; }
}
summary_hv() {  # the "value" of the "hypervolume" object in summary.json
  tr -d '\n ' < "$1/summary.json" | sed -n 's/.*"hypervolume":{"value":\([^,}]*\).*/\1/p'
  echo
}
# Running hypervolume of trials.csv (in file order) w.r.t. (10, 1): one line "n hv" per trial.
running_hv() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "epsilon") e = i; if ($i == "utility_mean") u = i }; next }
    { n++; x[n] = $e + 0; y[n] = 1 - $u;
      # 2-D sweep over the points inside the box, sorted by epsilon (insertion sort: n is small).
      m = 0; for (i = 1; i <= n; i++) if (x[i] < 10 && y[i] < 1) { m++; sx[m] = x[i]; sy[m] = y[i] }
      for (i = 2; i <= m; i++) { kx = sx[i]; ky = sy[i]; j = i - 1
        while (j > 0 && (sx[j] > kx || (sx[j] == kx && sy[j] > ky))) { sx[j+1] = sx[j]; sy[j+1] = sy[j]; j-- }
        sx[j+1] = kx; sy[j+1] = ky }
      hv = 0; ceil = 1; for (i = 1; i <= m; i++) if (sy[i] < ceil) { hv += (10 - sx[i]) * (ceil - sy[i]); ceil = sy[i] }
      printf "%d %.12g\n", n, hv }' "$1/trials.csv"
}

# Search-space dimensions, from the first run's resolved config.
echo "pipeline: $pipeline; budget $initial + $iterations = $budget evaluations; seeds 1..$seeds"
[[ -n "$grid_pipeline" ]] && echo "grid: $grid_pipeline"
for s in $(seq 1 "$seeds"); do
  run "$out/dpareto_$s" "$s" --set "tuner.params={initial_points: $initial, iterations: $iterations}"
  run "$out/random_$s" "$s" --set tuner.use=random --set "tuner.params={trials: $budget}"
  if [[ -n "$grid_pipeline" ]]; then
    PIPE="$grid_pipeline" run "$out/grid_$s" "$s"
  else
  if [[ -z "$grid_points" ]]; then
    dims=$(awk '/^search_space:/ { on = 1; next } on && /^[^ ]/ { on = 0 } on && /^  [^ ]/ { d++ } END { print d }' \
      "$out/dpareto_$s/resolved_config.yaml")
    grid_points=2
    while [[ $(awk -v p="$grid_points" -v d="$dims" 'BEGIN { print p ^ d }') -lt $((4 * budget)) ]]; do
      grid_points=$((grid_points + 1))
    done
  fi
  run "$out/grid_$s" "$s" --set tuner.use=grid --set "tuner.params={points_per_dimension: $grid_points}"
  fi
  running_hv "$out/random_$s" > "$out/random_$s.trace"
  running_hv "$out/dpareto_$s" > "$out/dpareto_$s.trace"
  printf 'seed %d: dpareto %.6g  random %.6g  grid %.6g (%s trials)\n' "$s" "$(summary_hv "$out/dpareto_$s")" \
    "$(summary_hv "$out/random_$s")" "$(summary_hv "$out/grid_$s")" "$(($(wc -l < "$out/grid_$s/trials.csv") - 1))"
done

# "mean (sd s)" of the numbers on standard input, one per line.
mean_sd() { awk 'NF { t += $1; q += $1 * $1; n++ }
  END { m = t / n; sd = n > 1 ? sqrt((q - n * m * m) / (n - 1)) : 0; printf "%.6g (sd %.3g)", m, sd }'; }
mean_of() { for s in $(seq 1 "$seeds"); do summary_hv "$out/${1}_$s"; done | mean_sd; }
echo "mean hypervolume over $seeds seeds:"
echo "  dpareto ($budget evaluations): $(mean_of dpareto)"
echo "  random  ($budget evaluations): $(mean_of random)"
echo "  grid    ($(($(wc -l < "$out/grid_1/trials.csv") - 1)) evaluations): $(mean_of grid)"

# Out-of-sample scores (--reevaluate K): each front re-run under K fresh seeds with R repetitions.
if (( reevaluate > 0 )); then
  echo "front re-scored out of sample (mean over $reevaluate fresh seeds, $reeval_repetitions repetitions each):"
  for s in $(seq 1 "$seeds"); do
    line="seed $s:"
    for t in dpareto random grid; do
      for j in $(seq 1 "$reevaluate"); do
        run "$out/rescored_${t}_${s}_$j" $((1000 * s + j)) --set tuner.use=dpareto \
          --set "tuner.params={initial_trials: $out/${t}_$s/pareto_front.csv, iterations: 0}" \
          --set "utility.repetitions=$reeval_repetitions"
        summary_hv "$out/rescored_${t}_${s}_$j"
      done | awk 'NF { t += $1; n++ } END { printf "%.6g\n", t / n }' > "$out/rescored_${t}_$s"
      line+=" $t $(cat "$out/rescored_${t}_$s")"
    done
    echo "$line"
  done
  rescored_mean() { for s in $(seq 1 "$seeds"); do cat "$out/rescored_${1}_$s"; done | mean_sd; }
  wins() { for s in $(seq 1 "$seeds"); do paste -d' ' "$out/rescored_dpareto_$s" "$out/rescored_${1}_$s"; done |
    awk '$1 > $2 { w++ } END { printf "%d of %d seeds", w, NR }'; }
  echo "mean re-scored hypervolume over $seeds seeds:"
  echo "  dpareto: $(rescored_mean dpareto)"
  echo "  random:  $(rescored_mean random) (dpareto above it on $(wins random))"
  echo "  grid:    $(rescored_mean grid) (dpareto above it on $(wins grid))"
fi

# Mean traces and the plot (hypervolume against evaluations, as paper 000 Fig. 5 top).
for t in dpareto random; do
  cat "$out/${t}"_*.trace | awk '{ s[$1] += $2; c[$1]++ } END { for (n in s) print n, s[n] / c[n] }' | sort -n > "$out/$t.mean"
done
grid_mean=$(for s in $(seq 1 "$seeds"); do summary_hv "$out/grid_$s"; done | awk 'NF { t += $1; n++ } END { print t / n }')
grid_n=$(($(wc -l < "$out/grid_1/trials.csv") - 1))
awk -v budget="$budget" -v grid="$grid_mean" -v gridn="$grid_n" -v seeds="$seeds" '
  FNR == 1 { f++ } { n[f, FNR] = $1; v[f, FNR] = $2; len[f] = FNR; if ($2 > hi) hi = $2; if (lo == "" || $2 < lo) lo = $2 }
  END {
    if (grid > hi) hi = grid; if (grid < lo) lo = grid; pad = (hi - lo) * 0.05 + 1e-9; lo -= pad; hi += pad
    W = 720; H = 480; L = 70; R = 20; T = 40; B = 60
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H
    printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
    printf "<text x=\"%d\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">mean hypervolume over %d seeds (reference (10, 1))</text>\n", W / 2, seeds
    printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, H - B, W - R, H - B
    printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, T, L, H - B
    for (k = 0; k <= 5; k++) {
      xv = budget * k / 5; x = L + xv / budget * (W - L - R)
      printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n", x, H - B + 18, xv
      yv = lo + (hi - lo) * k / 5; y = H - B - (yv - lo) / (hi - lo) * (H - T - B)
      printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>\n", L - 8, y + 4, yv
    }
    printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">evaluations</text>\n", (L + W - R) / 2, H - 15
    printf "<text transform=\"translate(18,%d) rotate(-90)\" text-anchor=\"middle\">hypervolume</text>\n", (T + H - B) / 2
    split("#d62728 #1f77b4", colour, " "); split("DPareto random", label, " ")
    for (c = 1; c <= 2; c++) {
      printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" points=\"", colour[c]
      for (i = 1; i <= len[c]; i++) printf "%.1f,%.1f ", L + n[c, i] / budget * (W - L - R), H - B - (v[c, i] - lo) / (hi - lo) * (H - T - B)
      printf "\"/>\n<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>\n", W - R - 150, T + 15 * c, colour[c], label[c]
    }
    y = H - B - (grid - lo) / (hi - lo) * (H - T - B)
    printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#2ca02c\" stroke-dasharray=\"6,4\"/>\n", L, y, W - R, y
    printf "<text x=\"%d\" y=\"%d\" fill=\"#2ca02c\">grid, %d evaluations (final)</text>\n", W - R - 150, T + 45, gridn
    printf "</svg>\n"
  }' "$out/dpareto.mean" "$out/random.mean" > "$out/hypervolume_comparison.svg"
echo "plot: $out/hypervolume_comparison.svg"

# The empirical fronts of seed 1 (paper 000 Fig. 6): epsilon (log scale) against error, staircases.
front_of() {  # "epsilon error" lines of pareto_front.csv, by increasing epsilon
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "epsilon") e = i; if ($i == "utility_mean") u = i }; next }
    { printf "%.12g %.12g\n", $e, 1 - $u }' "$1/pareto_front.csv" | sort -g
}
{ front_of "$out/dpareto_1"; echo; front_of "$out/random_1"; echo; front_of "$out/grid_1"; } |
awk -v budget="$budget" -v gridn="$grid_n" '
  BEGIN { f = 1 }
  NF == 0 { f++; next }
  { n[f]++; x[f, n[f]] = $1; y[f, n[f]] = $2; if ($1 > 0) { lx = log($1) / log(10); if (lo == "" || lx < lo) lo = lx; if (hi == "" || lx > hi) hi = lx } }
  END {
    lo = int(lo) - (lo < int(lo)); hi = int(hi) + (hi > int(hi)); if (hi <= lo) hi = lo + 1
    ymax = 0; for (c = 1; c <= 3; c++) for (i = 1; i <= n[c]; i++) if (y[c, i] > ymax) ymax = y[c, i]
    ymax = ymax * 1.1 + 1e-9
    W = 720; H = 480; L = 70; R = 20; T = 40; B = 60
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H
    printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
    printf "<text x=\"%d\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">empirical Pareto fronts, seed 1</text>\n", W / 2
    printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, H - B, W - R, H - B
    printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, T, L, H - B
    for (e = lo; e <= hi; e++) printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">1e%d</text>\n", L + (e - lo) / (hi - lo) * (W - L - R), H - B + 18, e
    for (k = 0; k <= 5; k++) printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n", L - 8, H - B - k / 5 * (H - T - B) + 4, ymax * k / 5
    printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">epsilon (log scale)</text>\n", (L + W - R) / 2, H - 15
    printf "<text transform=\"translate(18,%d) rotate(-90)\" text-anchor=\"middle\">error = 1 - utility</text>\n", (T + H - B) / 2
    split("#d62728 #1f77b4 #2ca02c", colour, " ")
    label[1] = "DPareto (" budget " evaluations)"; label[2] = "random (" budget ")"; label[3] = "grid (" gridn ")"
    for (c = 1; c <= 3; c++) {
      printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" points=\"", colour[c]
      for (i = 1; i <= n[c]; i++) {
        if (x[c, i] <= 0) continue
        px = L + (log(x[c, i]) / log(10) - lo) / (hi - lo) * (W - L - R); py = H - B - y[c, i] / ymax * (H - T - B)
        if (i > 1 && x[c, i - 1] > 0) printf "%.1f,%.1f ", px, H - B - y[c, i - 1] / ymax * (H - T - B)
        printf "%.1f,%.1f ", px, py
      }
      printf "\"/>\n"
      for (i = 1; i <= n[c]; i++) if (x[c, i] > 0)
        printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", L + (log(x[c, i]) / log(10) - lo) / (hi - lo) * (W - L - R), H - B - y[c, i] / ymax * (H - T - B), colour[c]
      printf "<text x=\"%d\" y=\"%d\" fill=\"%s\" text-anchor=\"end\">%s</text>\n", W - R - 8, T + 15 * c, colour[c], label[c]
    }
    printf "</svg>\n"
  }' > "$out/fronts_seed1.svg"
echo "plot: $out/fronts_seed1.svg"
