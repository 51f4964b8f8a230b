/** Every subcommand, in the order `drainbridge --help` lists them. One line per command file. */
import type { Command } from '../command.ts';
import { abortCommand } from './abort.ts';
import { demoCommand } from './demo.ts';
import { evacuateCommand } from './evacuate.ts';
import { forwarderCommand } from './forwarder.ts';
import { planCommand } from './plan.ts';
import { restoreCommand } from './restore.ts';
import { runCommand } from './run.ts';
import { simCommand } from './sim.ts';

export const COMMANDS: readonly Command[] = [
  evacuateCommand,
  restoreCommand,
  abortCommand,
  planCommand,
  forwarderCommand,
  runCommand,
  simCommand,
  demoCommand,
];
