/**
 * One damaged record and what `drainbridge repair` writes instead. Every owner of a record (the node's
 * ledger, the Evacuation record, the admission Lease) plans its own repairs in this shape, and the command
 * shows and applies them alike.
 */
export interface RepairAction {
  /** What the record is and where it lives. */
  readonly record: string;
  /** Why it cannot be read. */
  readonly problem: string;
  /** Its text now. */
  readonly current: string;
  /** What will be written (the new text, or a sentence for a removal or reset). */
  readonly next: string;
  /** What was kept, dropped or assumed, for the operator. */
  readonly notes: readonly string[];
  /** Writes it (conditional on the version it was planned from). */
  apply(): Promise<void>;
}
