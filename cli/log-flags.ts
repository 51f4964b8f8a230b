/**
 * The logging flags every command accepts. In a module of their own: `drainbridge --help` prints them and
 * must not load the commands' own modules to do so (its start is measured in bench/).
 */
import type { FlagSpec } from './flags.ts';

/** Flags every command accepts (main takes them off the command line before the command sees it). */
export const LOG_FLAGS: readonly FlagSpec[] = [
  {
    name: 'log-level',
    kind: 'value',
    value: 'LEVEL',
    choices: ['debug', 'info', 'warn', 'error', 'off'],
    help: 'log lines at or above LEVEL (default off; DRAINBRIDGE_LOG_LEVEL)',
  },
  {
    name: 'log-format',
    kind: 'value',
    value: 'FORMAT',
    choices: ['text', 'json'],
    help: 'text or json (default text on stderr, json in a file; DRAINBRIDGE_LOG_FORMAT)',
  },
  {
    name: 'log-file',
    kind: 'value',
    value: 'FILE',
    help: 'append the log to FILE instead of stderr (default level info; DRAINBRIDGE_LOG_FILE)',
  },
];
