/** Every subcommand, in the order `drainbridge --help` lists them. One line per command file. */
import type { Command } from '../command.ts';

export const COMMANDS: readonly Command[] = [];
