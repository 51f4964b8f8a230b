/**
 * `drainbridge repair NODE`: rewrite the records drainbridge cannot read (issue 12) — the node's ledger,
 * the admission queue, its Evacuation records' owner claims and branch states. Shows what it found and
 * what it would write, then asks; writes only with a yes (or `--yes`).
 */
import { createInterface } from 'node:readline/promises';
import { planRepair, type RepairAction } from '../../lib/workflow/repair.ts';
import { connectForNode } from '../cluster.ts';
import { type Command, type CommandContext, processContext } from '../command.ts';
import { CLUSTER_FLAGS } from '../common-flags.ts';
import { requesterName } from '../embedded.ts';
import { EXIT } from '../exit-codes.ts';
import { type FlagSpec, isOn } from '../flags.ts';
import { readNamedNode } from '../node-state.ts';

const FLAGS: readonly FlagSpec[] = [
  { name: 'yes', kind: 'switch', help: 'write without asking (needed when stdin is not a terminal)' },
  ...CLUSTER_FLAGS,
];
/** Long damaged text is shown cut, so a 250 KiB ledger does not flood the terminal. */
const SHOW_CHARS = 600;

function shown(text: string): string {
  return text.length > SHOW_CHARS ? `${text.slice(0, SHOW_CHARS)}… (${text.length} characters)` : text;
}

function describe(action: RepairAction, index: number): string[] {
  return [
    `${index + 1}. ${action.record}`,
    `   cannot be read: ${action.problem}`,
    `   now:        ${shown(action.current)}`,
    `   will write: ${shown(action.next)}`,
    ...action.notes.map((note) => `     - ${note}`),
    '',
  ];
}

async function confirmed(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const prompt = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await prompt.question(question)).trim());
  } finally {
    prompt.close();
  }
}

export const repairCommand: Command = {
  name: 'repair',
  summary: "rewrite drainbridge's records on a node that cannot be read (shows what it writes; asks first)",
  usage: [
    'Usage: drainbridge repair NODE [--yes] [--kubeconfig FILE] [--context NAME]',
    '',
    'A record drainbridge keeps in the cluster that it cannot read (the node ledger annotation',
    'drainbridge.io/ledger, the admission queue on the drainbridge-admission Lease, the owner claim or',
    "a branch state on the node's Evacuation records) blocks that node: nothing is cordoned, uncordoned",
    'or evicted there, and the node still counts as held. This command shows each such record, why it',
    'cannot be read and what it would write instead, and writes only after you confirm (or --yes).',
    '  A ledger keeps every hold and tombstone that still reads; a cordoned node with no surviving hold',
    '  gets the hold repaired-NODE (end it with drainbridge restore); the cordon is recorded as',
    "  drainbridge's only when managedFields say so, otherwise restore leaves it.",
    'Not confirmed (or stdin not a terminal without --yes): nothing is written, exit 5.',
  ].join('\n'),
  flags: FLAGS,
  operands: ['NODE'],
  exits: ['ok', 'failed', 'usage', 'notReady', 'refused'],
  async run(argv, context: CommandContext = processContext()) {
    const started = await connectForNode(argv, FLAGS, context, 'repair');
    if (!started) return EXIT.notReady;
    const { parsed, node, cluster } = started;
    await readNamedNode(cluster.client, node); // a node that does not exist is a usage error (exit 2)
    const settings = { namespace: cluster.config.namespace, now: new Date(), operator: requesterName() };
    const actions = await planRepair(cluster.client, node, settings);
    if (actions.length === 0) {
      context.out(`node ${node}: every drainbridge record is readable; nothing to repair`);
      return EXIT.ok;
    }
    context.out(`node ${node}: ${actions.length} record(s) cannot be read`);
    context.out('');
    for (const line of actions.flatMap(describe)) context.out(line);
    if (!isOn(parsed, 'yes') && !(await confirmed(`Write ${actions.length} repair(s)? [y/N] `))) {
      const why = process.stdin.isTTY ? 'not confirmed' : 'stdin is not a terminal (add --yes to write)';
      context.err(`drainbridge repair: refused: ${why}; nothing was changed.`);
      return EXIT.refused;
    }
    for (const action of actions) await action.apply();
    context.out(`repaired ${actions.length} record(s) on node ${node}`);
    return EXIT.ok;
  },
};
