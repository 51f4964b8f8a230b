/**
 * What a call printed: the lines written to stdout and stderr while `call` ran (EMF metric lines and
 * INFO logs go to stdout, WARN and ERROR logs to stderr), and how the call ended. For checking that a
 * refusal's log lines carry no stack trace, and which metric lines a handler printed.
 */
export interface Captured<T> {
  readonly lines: string[];
  readonly result?: T;
  readonly error?: unknown;
}

export async function captureOutput<T>(call: () => Promise<T>): Promise<Captured<T>> {
  const lines: string[] = [];
  const streams = [process.stdout, process.stderr];
  const writes = streams.map((stream) => stream.write.bind(stream));
  streams.forEach((stream, i) => {
    const write = writes[i] as typeof stream.write;
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      // Text is what the code printed; binary chunks are the test runner's own reports from a child
      // process to its parent (node --test), which must pass through untouched.
      if (typeof chunk !== 'string') return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
      lines.push(...chunk.split('\n').filter(Boolean));
      return true;
    }) as typeof stream.write;
  });
  try {
    return { lines, result: await call() };
  } catch (error) {
    return { lines, error };
  } finally {
    streams.forEach((stream, i) => {
      stream.write = writes[i] as typeof stream.write;
    });
  }
}
