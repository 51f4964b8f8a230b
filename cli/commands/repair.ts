/**
 * `drainbridge repair NODE`: rewrite the records drainbridge cannot read (issue 12) — the node's ledger,
 * the admission queue, its Evacuation records' owner claims and branch states. Shows what it found and
 * what it would write, then asks; writes only with a yes (or `--yes`).
 */
import { createInterface } from 'node:readline/promises';
import { buildKubeConfig } from '../../lib/config/index.ts';
import { KubeClient } from '../../lib/kube/client.ts';
import { planRepair, type RepairAction } from '../../lib/workflow/repair.ts';
import { parseArgs } from '../args.ts';
import { type Command, UsageError } from '../command.ts';
import { configFor, requesterName } from '../embedded.ts';

const OWN = { yes: false, kubeconfig: true };
/** Long damaged text is shown cut, so a 250 KiB ledger does not flood the terminal. */
const SHOW_CHARS = 600;

function shown(text: string): string {
  return text.length > SHOW_CHARS ? `${text.slice(0, SHOW_CHARS)}… (${text.length} characters)` : text;
}

function describe(action: RepairAction, index: number): string {
  return [
    `${index + 1}. ${action.record}`,
    `   cannot be read: ${action.problem}`,
    `   now:        ${shown(action.current)}`,
    `   will write: ${shown(action.next)}`,
    ...action.notes.map((note) => `     - ${note}`),
  ].join('\n');
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
    'Usage: drainbridge repair NODE [--yes] [--kubeconfig FILE]',
    '',
    'A record drainbridge keeps in the cluster that it cannot read (the node ledger annotation',
    'drainbridge.io/ledger, the admission queue on the drainbridge-admission Lease, the owner claim or',
    "a branch state on the node's Evacuation records) blocks that node: nothing is cordoned, uncordoned",
    'or evicted there, and the node still counts as held. This command shows each such record, why it',
    'cannot be read and what it would write instead, and writes only after you confirm.',
    '  A ledger keeps every hold and tombstone that still reads; a cordoned node with no surviving hold',
    '  gets the hold repaired-NODE (end it with drainbridge restore); the cordon is recorded as',
    "  drainbridge's only when managedFields say so, otherwise restore leaves it.",
    '  --yes   write without asking (needed when stdin is not a terminal)',
    'Exit status: 0 repaired or nothing to repair, 1 failed, 2 usage error or not confirmed.',
  ].join('\n'),
  async run(argv) {
    const args = parseArgs(argv, OWN);
    if (args.positional.length !== 1) throw new UsageError(`expected exactly one NODE, got ${args.positional.length}`);
    const node = args.positional[0] ?? '';
    const config = configFor(args.own.get('kubeconfig'));
    const client = new KubeClient(await buildKubeConfig(config));
    const settings = { namespace: config.namespace, now: new Date(), operator: requesterName() };
    const actions = await planRepair(client, node, settings);
    if (actions.length === 0) {
      console.log(`node ${node}: every drainbridge record is readable; nothing to repair`);
      return 0;
    }
    console.log(`node ${node}: ${actions.length} record(s) cannot be read\n\n${actions.map(describe).join('\n\n')}\n`);
    if (!args.own.has('yes') && !(await confirmed(`Write ${actions.length} repair(s)? [y/N] `))) {
      console.error(
        process.stdin.isTTY ? 'not confirmed: nothing written' : 'not a terminal: nothing written (add --yes to write)',
      );
      return 2;
    }
    for (const action of actions) await action.apply();
    console.log(`repaired ${actions.length} record(s) on node ${node}`);
    return 0;
  },
};
