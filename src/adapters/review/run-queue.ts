/**
 * The review runner's queue: the work of one run goes one piece at a time, in the order it came
 * (a start, then an approval, then a stop), and at most `limit` runs work at once across the
 * process. A piece that fails is handed to its own failure handler; the queue goes on.
 */
export class RunQueue {
  readonly #limit: number;
  readonly #chains = new Map<string, Promise<void>>();
  readonly #waiting: (() => void)[] = [];
  #active = 0;

  constructor(limit: number) {
    this.#limit = Math.max(1, limit);
  }

  /**
   * Queues `work` after the run's earlier pieces; its failure goes to `failed`, never thrown.
   * Resolves when this piece is over.
   */
  enqueue(
    run: string,
    work: () => Promise<void>,
    failed: (e: unknown) => Promise<void>,
  ): Promise<void> {
    const prev = this.#chains.get(run) ?? Promise.resolve();
    const next = prev.then(async () => {
      await this.#slot();
      try {
        await work();
      } catch (e) {
        await failed(e);
      } finally {
        this.#free();
      }
    });
    this.#chains.set(run, next);
    void next.finally(() => {
      if (this.#chains.get(run) === next) this.#chains.delete(run);
    });
    return next;
  }

  /** Whether the run has work queued or running in this process. */
  has(run: string): boolean {
    return this.#chains.has(run);
  }

  /** Resolves once nothing is queued or running. */
  async idle(): Promise<void> {
    while (this.#chains.size > 0) await Promise.allSettled([...this.#chains.values()]);
  }

  async #slot(): Promise<void> {
    if (this.#active >= this.#limit) await new Promise<void>((r) => this.#waiting.push(r));
    this.#active++;
  }

  #free(): void {
    this.#active--;
    this.#waiting.shift()?.();
  }
}
