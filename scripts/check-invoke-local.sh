#!/usr/bin/env bash
# Checks `serverless invoke local` (osls bundles the function with esbuild on demand, into .esbuild/):
#  1. the packaged functions refuse bad input the way Step Functions will see it: the malformed samples
#     in events/invalid/ give errorType InvalidInput and a message naming the field (validation runs
#     before any client is built: no AWS credentials, no cluster);
#  2. the README's example works as written, offline: `npm run invoke -- …` walks the first steps of an
#     evacuation against a simulated cluster — each function answers, the outcome step prints the event
#     it would publish, no Node deprecation warning is printed, and the logged memory is serverless.yml's.
# Usage: bash scripts/check-invoke-local.sh   (about a minute)
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

echo "npm run invoke -- resolveTarget admit pass:pass-pods finishEvacuation (offline, against the simulator)"
chain=$(npm run --silent invoke -- resolveTarget admit pass:pass-pods finishEvacuation 2>&1) || {
  echo "$chain"
  echo "  FAIL: a function failed"
  failures=$((failures + 1))
}
memory=$(sed -n 's/^ *memorySize: *\([0-9]*\).*/\1/p' serverless.yml | head -1)
check_chain() {
  local what="$1" pattern="$2" expect="$3"
  if grep -qE "$pattern" <<<"$chain"; then found=yes; else found=no; fi
  if [[ $found != "$expect" ]]; then
    echo "  FAIL: $what"
    failures=$((failures + 1))
  else
    echo "  ok: $what"
  fi
}
check_chain "no Node deprecation warning" 'DeprecationWarning' no
check_chain "function_memory_size is serverless.yml's ($memory)" "\"function_memory_size\":\"$memory\"" yes
check_chain "the outcome step printed Evacuation Succeeded" '"DetailType":"Evacuation Succeeded"' yes
check_chain "the pass evicted node-1's pods (the sample's request evicts the bare pod: force)" '→ pass: ok' yes
if grep -oE '"function_memory_size":"[0-9]+"' <<<"$chain" | grep -qv "\"$memory\""; then
  echo "  FAIL: a function logged a memory size other than $memory"
  failures=$((failures + 1))
fi

if [[ $failures -gt 0 ]]; then
  echo "$failures invoke-local checks failed"
  exit 1
fi
echo "all invoke-local checks passed"
