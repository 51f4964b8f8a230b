/** Every subcommand, in the order `drainbridge --help` lists them. One line per command file. */

import { bundledScenarios } from '../../sim/scenarios/index.ts';
import type { Command } from '../command.ts';
import { abortCommand } from './abort.ts';
import { checkCommand } from './check.ts';
import { completionCommandFor } from './completion.ts';
import { demoCommand } from './demo.ts';
import { evacuateCommand } from './evacuate.ts';
import { forwarderCommand } from './forwarder.ts';
import { planCommand } from './plan.ts';
import { repairCommand } from './repair.ts';
import { reportCommand } from './report.ts';
import { restoreCommand } from './restore.ts';
import { runCommand } from './run.ts';
import { simCommand } from './sim.ts';
import { statusCommand } from './status.ts';

export const COMMANDS: readonly Command[] = [
  evacuateCommand,
  restoreCommand,
  abortCommand,
  planCommand,
  reportCommand,
  statusCommand,
  repairCommand,
  checkCommand,
  forwarderCommand,
  runCommand,
  simCommand,
  demoCommand,
  completionCommandFor(() => COMMANDS, bundledScenarios),
];
