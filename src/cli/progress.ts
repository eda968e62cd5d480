// A progress bar on stderr for long work (bulk imports, large batches), drawn only when stderr
// is a terminal: scripts and logs never see carriage returns.
export interface Progress {
  /** `done` more units finished */
  advance(done: number): void;
  /** the work ended (successfully or not): finish the line */
  finish(): void;
}

interface Terminal {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

const NONE: Progress = { advance() {}, finish() {} };
/** redraw at most this often: a terminal does not need more, and 10 000 redraws would cost */
const REDRAW_MS = 100;

export function progressBar(label: string, total: number, stream: Terminal = process.stderr, now: () => number = Date.now): Progress {
  if (!stream.isTTY || total <= 0) return NONE;
  const started = now();
  let done = 0;
  let drawn = -Infinity;
  const draw = () => {
    drawn = now();
    const fraction = Math.min(1, done / total);
    const seconds = ((drawn - started) / 1000).toFixed(1);
    const tail = ` ${done}/${total} ${Math.floor(fraction * 100)}% ${seconds}s`;
    const width = Math.max(10, Math.min(40, (stream.columns ?? 80) - label.length - tail.length - 4));
    const filled = Math.round(fraction * width);
    stream.write(`\r${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}]${tail}`);
  };
  draw();
  return {
    advance(n) {
      done += n;
      if (now() - drawn >= REDRAW_MS || done >= total) draw();
    },
    finish() {
      draw();
      stream.write('\n');
    },
  };
}
