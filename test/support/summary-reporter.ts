/**
 * A node:test reporter that prints one summary line per suite folder at the end of a run, next to the
 * spec reporter (`--test-reporter=spec --test-reporter=./test/support/summary-reporter.ts`, each with
 * `--test-reporter-destination=stdout`):
 *
 *   fault injection: 69 scenarios, 69 held, 0 violated (0 failed otherwise)
 *   bad input: 367 cases (functions 158, notices 27, cli 182): 367 refused cleanly, 0 not
 *
 * A test counts as a scenario/case when it is a test (not a suite) in a file under test/faults/ or
 * test/bad-input/; a fault scenario failing with an InvariantViolation (test/support/invariants.ts) is
 * "violated", any other failure is "failed otherwise". Bad-input cases are grouped by the folder under
 * test/bad-input/ (functions, notices, cli).
 */

interface TestEventData {
  readonly name: string;
  readonly file?: string;
  readonly details?: { readonly type?: string; readonly error?: unknown };
  readonly skip?: unknown;
  readonly todo?: unknown;
}

type Outcome = 'pass' | 'violated' | 'fail';

function suiteOf(file: string | undefined): { suite: 'faults' | 'bad-input'; group: string } | undefined {
  const path = (file ?? '').replaceAll('\\', '/');
  const faults = path.match(/test\/faults\//);
  if (faults) return { suite: 'faults', group: 'faults' };
  const bad = path.match(/test\/bad-input\/([^/]+)\//);
  if (bad) return { suite: 'bad-input', group: bad[1] ?? 'other' };
  if (/test\/bad-input\//.test(path)) return { suite: 'bad-input', group: 'other' };
  return undefined;
}

function isViolation(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    if ((current as { name?: unknown }).name === 'InvariantViolation') return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

function faultLine(outcomes: Outcome[]): string {
  const held = outcomes.filter((o) => o === 'pass').length;
  const violated = outcomes.filter((o) => o === 'violated').length;
  const failed = outcomes.filter((o) => o === 'fail').length;
  return `fault injection: ${outcomes.length} scenarios, ${held} held, ${violated} violated (${failed} failed otherwise)`;
}

function badInputLine(groups: Map<string, Outcome[]>): string {
  const all = [...groups.values()].flat();
  const order = [
    'functions',
    'notices',
    'cli',
    ...[...groups.keys()].filter((g) => !['functions', 'notices', 'cli'].includes(g)),
  ];
  const parts = order.map((group) => `${group} ${groups.get(group)?.length ?? 0}`);
  const clean = all.filter((o) => o === 'pass').length;
  return `bad input: ${all.length} cases (${parts.join(', ')}): ${clean} refused cleanly, ${all.length - clean} not`;
}

export default async function* summaryReporter(source: AsyncIterable<{ type: string; data: TestEventData }>) {
  const faults: Outcome[] = [];
  const badInput = new Map<string, Outcome[]>();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { data } = event;
    if (data.details?.type === 'suite' || data.skip || data.todo) continue;
    const where = suiteOf(data.file);
    if (!where) continue;
    const outcome: Outcome =
      event.type === 'test:pass' ? 'pass' : isViolation(data.details?.error) ? 'violated' : 'fail';
    if (where.suite === 'faults') faults.push(outcome);
    else badInput.set(where.group, [...(badInput.get(where.group) ?? []), outcome]);
  }
  const lines: string[] = [];
  if (faults.length > 0) lines.push(faultLine(faults));
  if (badInput.size > 0) lines.push(badInputLine(badInput));
  if (lines.length > 0) yield `\n${lines.join('\n')}\n`;
}
