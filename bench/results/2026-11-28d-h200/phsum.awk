# sums of each phase over set-ups 2..5 of one bench_mg_setup run (ADIA_PHASES on stderr)
/adia phase mg: start/ { n++ }
n >= 2 && n <= 5 && /^adia phase/ {
  label = $0; sub(/^adia phase /, "", label); sub(/ +[0-9.]+ ms$/, "", label)
  if (label != "mg: start") { sum[label] += $(NF-1); if (!(label in seen)) { seen[label] = ++k; order[k] = label } }
}
END { tot = 0; for (i = 1; i <= k; i++) { printf "  %-36s %8.3f\n", order[i], sum[order[i]] / 4; tot += sum[order[i]] / 4 } printf "  %-36s %8.3f\n", "TOTAL (mean of set-ups 2-5)", tot }
