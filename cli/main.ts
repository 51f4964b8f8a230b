/**
 * `drainbridge`: dispatches to a subcommand; prints help; takes the logging flags every command accepts;
 * turns failures into one plain message and an exit status from the table (cli/exit-codes.ts).
 */
import { type Command, type CommandContext, processContext } from './command.ts';
import { COMMAND_CATALOG, catalogOf } from './commands/catalog.ts';
import { asksVersion, commandHelp, helpText, runCommand, versionText, wantsHelp } from './dispatch.ts';
import { EXIT } from './exit-codes.ts';
import { didYouMean } from './suggest.ts';

export { commandHelp } from './dispatch.ts';

/**
 * Runs `drainbridge argv`. Without `commands`, each command's module is loaded only when it runs (or its
 * --help is asked for): the top-level help and a mistyped name load none.
 */
export async function main(
  argv: readonly string[],
  commands?: readonly Command[],
  context: CommandContext = processContext(),
): Promise<number> {
  const catalog = commands ? catalogOf(commands) : COMMAND_CATALOG;
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? catalog.find((c) => c.name === rest[0]) : undefined;
    context.out(topic ? commandHelp(await topic.load()) : helpText(catalog));
    return name ? EXIT.ok : EXIT.usage;
  }
  if (asksVersion(name)) {
    context.out(await versionText());
    return EXIT.ok;
  }
  const entry = catalog.find((c) => c.name === name);
  if (!entry) {
    const hint = didYouMean(
      name,
      catalog.map((c) => c.name),
      (n) => `"${n}"`,
    );
    const what = name.startsWith('-')
      ? `a command comes first, not the flag ${name}`
      : `unknown command "${name}"${hint}`;
    context.err(`drainbridge: ${what}\nRun 'drainbridge --help' for the commands.`);
    return EXIT.usage;
  }
  const command = await entry.load();
  if (wantsHelp(rest)) {
    context.out(commandHelp(command));
    return EXIT.ok;
  }
  return runCommand(command, rest, context);
}
