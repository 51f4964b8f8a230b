/**
 * `drainbridge`: every command of the catalog (cli/commands/catalog.ts), through the dispatch the image's
 * entry shares (cli/dispatch.ts): help, logging flags, one plain message and an exit status per failure.
 */
import { type Command, type CommandContext, processContext } from './command.ts';
import { COMMAND_CATALOG, catalogOf } from './commands/catalog.ts';
import { dispatch } from './dispatch.ts';

export { commandHelp } from './dispatch.ts';

/**
 * Runs `drainbridge argv`. Without `commands`, each command's module is loaded only when it runs (or its
 * --help is asked for): the top-level help and a mistyped name load none.
 */
export function main(
  argv: readonly string[],
  commands?: readonly Command[],
  context: CommandContext = processContext(),
): Promise<number> {
  return dispatch(argv, commands ? catalogOf(commands) : COMMAND_CATALOG, context);
}
