#!/usr/bin/env bash
# replay.sh BIN DIR: ddpbench judge over every kept accept result of test_accept_repeat.sh in DIR (cwd DIR, so that
# the stored baseline g1.json,g2.json,g3.json resolves); one line each: name, exit, drained, paths.
bin=$1; cd "$2" || exit 1
out=$(mktemp -d)
for f in $(ls h*.json b*.json t*.json c*.json p*.json 2>/dev/null | sort -V); do
  n=${f%.json}
  "$bin" judge "$f" --failed-hosts "$out/$n.drain" --retest-hosts "$out/$n.retest" >"$out/$n.txt" 2>"$out/$n.err"
  rc=$?
  p=$(grep -E '^pair: fail pair_busbw(\.abs)? \S+<->\S+: ' "$out/$n.txt" | awk '{sub(/:$/, "", $4); print $4}' | sort -u | paste -sd' ')
  echo "$n rc=$rc drained='$(paste -sd' ' "$out/$n.drain" 2>/dev/null)' retest='$(paste -sd' ' "$out/$n.retest" 2>/dev/null)' paths='$p'"
done
rm -rf "$out"
