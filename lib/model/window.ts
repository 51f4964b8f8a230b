/**
 * Maintenance windows (lib/sources/windows/): an occurrence of a window, as one node's maintenance request
 * carries it. The window's own definition (cron, timezone, selector) stays with the schedule; a request
 * needs only what admission and the end of maintenance act on.
 */

/** How a node's maintenance in a window ends. */
export const WINDOW_ENDS = ['reboot', 'operator'] as const;
export type WindowEnd = (typeof WINDOW_ENDS)[number];

export interface WindowOccurrence {
  /** The window's name (configuration). */
  readonly name: string;
  /** This occurrence's opening (ISO 8601). */
  readonly opensAt: string;
  /** Nodes not admitted by then are not started (ISO 8601). */
  readonly closesAt: string;
  /** At most this many of the window's nodes are held at once (its own slots, inside the cluster-wide ones). */
  readonly maxNodes: number;
  /**
   * `reboot`: the node's maintenance ends when it has rebooted (boot ID changed) and is Ready again;
   * `operator`: when someone ends it (Maintenance Ended, `drainbridge restore`).
   */
  readonly endsOn: WindowEnd;
}

/** The requester of every request a window makes: admission counts the window's held nodes by it. */
export function windowRequester(name: string): string {
  return `maintenance-window/${name}`;
}
