/** `drainbridge`: dispatches to a subcommand; prints help; maps errors to exit codes. */
import { type Command, UsageError } from './command.ts';
import { COMMANDS } from './commands/index.ts';

function helpText(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    'drainbridge — node maintenance without losing work',
    '',
    'Usage: drainbridge <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    "Run `drainbridge <command> --help` for a command's options.",
  ].join('\n');
}

export async function main(argv: readonly string[], commands: readonly Command[] = COMMANDS): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(helpText(commands));
    return name ? 0 : 2;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    console.error(`drainbridge: unknown command "${name}"\n\n${helpText(commands)}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(command.usage);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`drainbridge ${name}: ${error.message}\n\n${command.usage}`);
      return 2;
    }
    console.error(`drainbridge ${name}: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
