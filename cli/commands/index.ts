/** Every subcommand, in the order `drainbridge --help` lists them. One line per command file. */
import type { Command } from '../command.ts';
import { abortCommand } from './abort.ts';
import { demoCommand } from './demo.ts';
import { evacuateCommand } from './evacuate.ts';
import { planCommand } from './plan.ts';
import { repairCommand } from './repair.ts';
import { restoreCommand } from './restore.ts';
import { simCommand } from './sim.ts';

export const COMMANDS: readonly Command[] = [
  evacuateCommand,
  restoreCommand,
  abortCommand,
  planCommand,
  repairCommand,
  simCommand,
  demoCommand,
];
