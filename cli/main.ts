/**
 * `drainbridge`: dispatches to a subcommand; prints help; takes the logging flags every command accepts;
 * turns failures into one plain message and an exit status from the table (cli/exit-codes.ts).
 */
import { type Command, type CommandContext, processContext } from './command.ts';
import { COMMANDS } from './commands/index.ts';
import { commandHelp, helpText, runCommand, wantsHelp } from './dispatch.ts';
import { EXIT } from './exit-codes.ts';
import { didYouMean } from './suggest.ts';

export { commandHelp } from './dispatch.ts';

export async function main(
  argv: readonly string[],
  commands: readonly Command[] = COMMANDS,
  context: CommandContext = processContext(),
): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? commands.find((c) => c.name === rest[0]) : undefined;
    context.out(topic ? commandHelp(topic) : helpText(commands));
    return name ? EXIT.ok : EXIT.usage;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    const hint = didYouMean(
      name,
      commands.map((c) => c.name),
      (n) => `"${n}"`,
    );
    const what = name.startsWith('-')
      ? `a command comes first, not the flag ${name}`
      : `unknown command "${name}"${hint}`;
    context.err(`drainbridge: ${what}\nRun 'drainbridge --help' for the commands.`);
    return EXIT.usage;
  }
  if (wantsHelp(rest)) {
    context.out(commandHelp(command));
    return EXIT.ok;
  }
  return runCommand(command, rest, context);
}
