/** Where progress goes: a writer and whether it is a terminal (a redrawn bar) or not (one line per step). */
export interface ProgressSink {
  write(text: string): void;
  isTTY: boolean;
}

const BAR_WIDTH = 24;

/**
 * Progress of a run on stderr: a bar redrawn in place on a terminal, one line per step otherwise
 * (CI logs, pipes), nothing when quiet.
 */
export class Progress {
  private done = 0;
  private readonly started = performance.now();
  private current = '';

  constructor(
    private readonly total: number,
    private readonly sink: ProgressSink | null,
  ) {}

  /** Starts the next step. */
  step(label: string): void {
    this.current = label;
    this.draw();
    this.done++;
  }

  /** Counts steps that will not run (their table failed). */
  advance(steps: number): void {
    this.done += steps;
  }

  /** Clears the bar (a terminal) so the final output starts on a clean line. */
  finish(): void {
    if (this.sink?.isTTY) this.sink.write('\r\x1b[2K');
  }

  private draw(): void {
    if (!this.sink) return;
    const seconds = ((performance.now() - this.started) / 1000).toFixed(0);
    const position = `${Math.min(this.done + 1, this.total)}/${this.total}`;
    if (!this.sink.isTTY) {
      this.sink.write(`[${position}] ${this.current} (${seconds} s)\n`);
      return;
    }
    const filled = this.total === 0 ? BAR_WIDTH : Math.round((this.done / this.total) * BAR_WIDTH);
    const bar = `${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}`;
    this.sink.write(`\r\x1b[2K[${bar}] ${position} ${this.current} (${seconds} s)`);
  }
}
