#!/usr/bin/env bash
# Checks that the packaged functions refuse bad input the way Step Functions will see it: runs
# `serverless invoke local` (osls bundles the function with esbuild on demand, into .esbuild/) on the
# malformed samples in events/invalid/ and requires errorType InvalidInput and a message naming the
# field. Validation runs before any client is built, so this needs no AWS credentials and no cluster.
# Usage: bash scripts/check-invoke-local.sh   (about 5 s per function)
set -euo pipefail
cd "$(dirname "$0")/.."

# function key in serverless.yml | sample under events/ | the field the refusal must name
CASES=(
  "admit invalid/admit-bad-node-name.json request.nodeName"
  "pass invalid/pass-unknown-branch.json branch"
  "resolveTarget invalid/resolve-target-no-target.json detail.target"
)

# Reads invoke local's stdout (log lines, then the error as indented JSON) and checks the error.
check_refusal() {
  local field="$1"
  FIELD="$field" npx --no-install node --input-type=module -e '
    const text = (await new Promise((done) => { let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => done(s)); }));
    const start = text.lastIndexOf("\n{\n");
    if (start < 0) { console.error("no error object in the output:\n" + text); process.exit(1); }
    const error = JSON.parse(text.slice(start + 1));
    const field = process.env.FIELD;
    if (error.errorType !== "InvalidInput") { console.error(`errorType ${error.errorType}, expected InvalidInput`); process.exit(1); }
    if (!String(error.errorMessage).includes(`${field}:`)) { console.error(`message does not name ${field}: ${error.errorMessage}`); process.exit(1); }
    console.log(`  ${error.errorType}: ${error.errorMessage}`);
  '
}

failures=0
for entry in "${CASES[@]}"; do
  read -r fn sample field <<<"$entry"
  echo "invoke local -f $fn --path events/$sample (expects InvalidInput naming $field)"
  status=0
  output=$(npx --no-install serverless invoke local -f "$fn" --path "events/$sample" 2>/dev/null) || status=$?
  if [[ $status -eq 0 ]]; then
    echo "  FAIL: the invocation succeeded; it must be refused"
    failures=$((failures + 1))
  elif ! check_refusal "$field" <<<"$output"; then
    echo "  FAIL"
    failures=$((failures + 1))
  fi
done

if [[ $failures -gt 0 ]]; then
  echo "$failures of ${#CASES[@]} invoke-local checks failed"
  exit 1
fi
echo "all ${#CASES[@]} invoke-local checks passed"
