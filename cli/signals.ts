/** Waiting for SIGTERM/SIGINT, for the long-running commands (forwarder, run). */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

/** Flags of the long-running commands that set a DRAINBRIDGE_* variable (the flag wins over the environment). */
export function envFromFlags(
  own: ReadonlyMap<string, string>,
  mapping: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [flag, variable] of Object.entries(mapping)) {
    const value = own.get(flag);
    if (value !== undefined) env[variable] = value;
  }
  return env;
}
