/**
 * The live display's frame on a terminal: a few lines at the bottom, redrawn in place, with lines printed
 * above it into the scrollback (log-update). Every redraw erases the whole previous frame and writes the
 * new one, in one write: log-update 7's partial redraw moves the cursor down over lines it assumes are
 * there (`cursorDown` does not scroll), so when a frame grows at the bottom of the screen the cursor
 * drifts, and the next erase takes the printed lines above the frame with it — lines lost on a 45-row
 * pane that a 120-row one kept. The frame is cut to fit: at most `rows - 1` lines of `columns - 1`
 * characters (a frame log-update has to clip or the terminal has to wrap is one it cannot erase).
 */
import { createLogUpdate } from 'log-update';

/** What the display draws on: a terminal stream (process.stdout), or a test's stand-in. */
export interface TerminalStream {
  write(text: string): boolean;
  readonly columns?: number;
  readonly rows?: number;
  readonly isTTY?: boolean;
}

export interface TerminalFrame {
  /** The terminal's size now (80×24 when it reports none: some ptys say 0×0). */
  readonly columns: number;
  readonly rows: number;
  /** Draws `text` as the frame (the previous one erased). */
  show(text: string): void;
  /** Prints a line above the frame (into the scrollback), then draws `frame` again — or none. */
  print(line: string, frame?: string): void;
  /** Leaves the frame on the screen as ordinary lines; the next `show` starts a new one below. */
  finish(): void;
}

/** The lines of `text`, at most `rows - 1` of them, each cut to `columns - 1` characters. Pure. */
export function fitFrame(text: string, columns: number, rows: number): string {
  const width = Math.max(10, columns - 1);
  const lines = text
    .split('\n')
    .map((line) => ([...line].length > width ? `${[...line].slice(0, width - 1).join('')}…` : line));
  const height = Math.max(1, rows - 1);
  return lines.slice(0, height).join('\n');
}

export function terminalFrame(stream: TerminalStream): TerminalFrame {
  // Writes are gathered and sent as one, so that an erase and its redraw reach the terminal together.
  let pending: string[] | undefined;
  const sized = {
    write(text: string) {
      if (pending) pending.push(text);
      else stream.write(text);
      return true;
    },
    isTTY: stream.isTTY,
    get columns() {
      return stream.columns || 80;
    },
    get rows() {
      return stream.rows || 24;
    },
  };
  // The cursor stays visible: hiding it would hook the process's signals (restore-cursor), which the
  // commands' own Ctrl-C handling owns.
  const draw = createLogUpdate(sized as unknown as NodeJS.WriteStream, { showCursor: true });
  let shown: string | undefined;
  const batch = (steps: () => void) => {
    pending = [];
    try {
      steps();
    } finally {
      const text = pending.join('');
      pending = undefined;
      if (text) stream.write(text);
    }
  };
  const redraw = (frame: string) => {
    draw.clear();
    shown = fitFrame(frame, sized.columns, sized.rows);
    draw(shown);
  };
  return {
    get columns() {
      return sized.columns;
    },
    get rows() {
      return sized.rows;
    },
    show(text) {
      if (shown !== undefined && fitFrame(text, sized.columns, sized.rows) === shown) return;
      batch(() => redraw(text));
    },
    print(line, frame) {
      batch(() => {
        // persist erases the frame, prints the line, and forgets the frame: the next draw is a first one.
        draw.persist(line);
        shown = undefined;
        if (frame !== undefined) redraw(frame);
      });
    },
    finish() {
      draw.done();
      shown = undefined;
    },
  };
}
