/**
 * The exit statuses of every `drainbridge` command: one table, printed by `--help` (each command lists
 * the rows it uses) and in docs/cli.md, and tested: test/cli/exit-codes.test.ts produces each status with a
 * real run, test/unit/cli/docs-exits.test.ts keeps docs/cli.md's table equal to EXIT_MEANINGS. A script
 * can rely on them: 2, 4 and 5 mean nothing was changed.
 */

export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  blocked: 3,
  notReady: 4,
  refused: 5,
  interrupted: 130,
  terminated: 143,
} as const;

export type ExitName = keyof typeof EXIT;
export type ExitCode = (typeof EXIT)[ExitName];

/** What each status means, in the words `--help` prints. */
export const EXIT_MEANINGS: Readonly<Record<ExitName, string>> = {
  ok: 'done: evacuated, restored, nothing to restore, abort recorded, repaired or nothing to repair, plan not blocked, check passed, status shown, report written',
  failed: 'the operation ran and failed; the node is left in the safe state, which the output names',
  usage: 'bad arguments, environment or kubeconfig (each problem named); nothing was changed',
  blocked: 'plan: the evacuation would not finish (blockers listed)',
  notReady:
    'the cluster lacks what drainbridge needs (CRD, namespace, RBAC), or it or Nova cannot be reached; nothing was changed',
  refused:
    'the request conflicts with what the cluster records (it already ended, nothing to abort, no record of it to report, a record drainbridge cannot read: drainbridge repair); nothing was changed',
  interrupted: 'SIGINT (Ctrl-C): stopped at a safe point and handed the request back; run the same command to resume',
  terminated: 'SIGTERM: as for SIGINT',
};

/** The exit status for a signal that stopped a command (128 + its number, as shells report it). */
export function exitForSignal(signal: NodeJS.Signals): ExitCode {
  return signal === 'SIGTERM' ? EXIT.terminated : EXIT.interrupted;
}

/** The table's rows for `names` (all when omitted), aligned, for help texts. */
export function exitTable(names: readonly ExitName[] = Object.keys(EXIT) as ExitName[]): string {
  return names.map((name) => `  ${String(EXIT[name]).padStart(3)}  ${EXIT_MEANINGS[name]}`).join('\n');
}
