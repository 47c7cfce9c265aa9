import { SingleBar } from 'cli-progress';

/**
 * Where progress goes: a writer and whether it is a terminal (a bar drawn by cli-progress on
 * `stream`, stderr by default) or not (one line per step).
 */
export interface ProgressSink {
  write(text: string): void;
  isTTY: boolean;
  stream?: NodeJS.WritableStream;
}

/**
 * Progress of a run on stderr: a bar redrawn in place on a terminal (cli-progress), one line per
 * step otherwise (CI logs, pipes), nothing when quiet.
 */
export class Progress {
  private done = 0;
  private readonly started = performance.now();
  private readonly bar: SingleBar | null;

  constructor(
    private readonly total: number,
    private readonly sink: ProgressSink | null,
  ) {
    this.bar = sink?.isTTY
      ? new SingleBar({
          stream: sink.stream ?? process.stderr,
          format: '[{bar}] {value}/{total} {step} ({duration} s)',
          barsize: 24,
          barCompleteChar: '#',
          barIncompleteChar: '.',
          hideCursor: true,
          clearOnComplete: true,
          fps: 5,
        })
      : null;
    this.bar?.start(Math.max(total, 1), 0, { step: '' });
  }

  /** Starts the next step. */
  step(label: string): void {
    if (this.bar) this.bar.update(Math.min(this.done + 1, this.total), { step: label });
    else if (this.sink) {
      const seconds = ((performance.now() - this.started) / 1000).toFixed(0);
      this.sink.write(`[${Math.min(this.done + 1, this.total)}/${this.total}] ${label} (${seconds} s)\n`);
    }
    this.done++;
  }

  /** Counts steps that will not run (their table failed). */
  advance(steps: number): void {
    this.done += steps;
    this.bar?.update(Math.min(this.done, this.total));
  }

  /** Removes the bar (a terminal) so the final output starts on a clean line. */
  finish(): void {
    this.bar?.stop();
  }
}
