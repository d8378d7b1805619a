#!/usr/bin/env bash
# Lists the upstream node conformance specs, without a cluster: e2e.test
# (built by deploy/conformance/build.sh, cached) run with --ginkgo.dry-run,
# the [NodeConformance] focus and the skeleton provider. Prints every spec's
# full text (sorted), then the count by area (the outermost describe: its
# [sig-xxx] and text, e.g. "[sig-node] Pods", "[sig-storage] ConfigMap"),
# then the total.
#   bash deploy/conformance/list.sh [--focus REGEX] [--skip REGEX] [--json FILE]
#   --focus  ginkgo focus (default '\[NodeConformance\]')
#   --skip   ginkgo skip (default none)
#   --json   also keep ginkgo's JSON report of the dry run in FILE
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
focus='\[NodeConformance\]'
skip=''
json=''
while [ $# -gt 0 ]; do
  case "$1" in
    --focus) focus=$2; shift 2 ;;
    --skip) skip=$2; shift 2 ;;
    --json) json=$2; shift 2 ;;
    *) echo "list.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v jq >/dev/null || { echo "list.sh: jq is missing" >&2; exit 1; }
bin=$(bash "$here/build.sh" e2e.test | tail -1)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args=(--provider=skeleton --ginkgo.dry-run --ginkgo.focus="$focus" --ginkgo.json-report="$work/report.json" --ginkgo.no-color)
[ -n "$skip" ] && args+=(--ginkgo.skip="$skip")
# The dry run prints a dot per spec and a summary; the report is what we read.
(cd "$work" && "$bin/e2e.test" "${args[@]}" >"$work/out.log" 2>&1) || {
  echo "list.sh: e2e.test --ginkgo.dry-run failed:" >&2; tail -30 "$work/out.log" >&2; exit 1
}
[ -n "$json" ] && cp "$work/report.json" "$json"

# The specs the focus selects: the dry run reports them as passed, the others as skipped.
jq -r '.[].SpecReports[] | select(.LeafNodeType == "It" and .State != "skipped")
  | [(.ContainerHierarchyTexts[0] // "(top level)"), ((.ContainerHierarchyTexts + [.LeafNodeText]) | join(" "))] | @tsv' \
  "$work/report.json" | sort -t $'\t' -k2 > "$work/specs.tsv"

cut -f2 "$work/specs.tsv"
echo
echo "By area:"
# The area without the labels some describes carry ([NodeConformance], [LinuxOnly]).
cut -f1 "$work/specs.tsv" | sed -E 's/ \[[^]]*\]//g' | sort | uniq -c | sort -k1,1nr -k2 | awk '{ n = $1; $1 = ""; printf "%5d %s\n", n, substr($0, 2) }'
printf '%5d total (focus %s%s)\n' "$(wc -l < "$work/specs.tsv")" "$focus" "${skip:+, skip $skip}"
for label in Slow Serial Disruptive; do
  n=$(cut -f2 "$work/specs.tsv" | grep -c "\[$label\]" || true)
  [ "$n" = 0 ] || printf '%5d of them [%s]\n' "$n" "$label"
done
