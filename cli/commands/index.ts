/** Every subcommand, in the order `drainbridge --help` lists them. One line per command file. */
import type { Command } from '../command.ts';
import { planCommand } from './plan.ts';
import { simCommand } from './sim.ts';

export const COMMANDS: readonly Command[] = [planCommand, simCommand];
