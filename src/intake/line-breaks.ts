/**
 * Counts physical line breaks (`\n`, `\r\n` once, lone `\r`) in a byte stream seen chunk by
 * chunk, so a byte offset can be turned into the 1-based line an editor shows.
 *
 * csv-parse's own `info.lines` counts a quoted CRLF as two lines, so the CSV reader (formats/csv.ts) maps the byte
 * offset where each record starts (csv-parse's `info.bytes` of the record before) through this.
 * Only breaks not yet passed are kept, so memory follows the stream's buffering, not the file.
 */
export class LineBreaks {
  /** Offsets just after each break not yet consumed by `lineAt`. */
  #ends: number[] = [];
  #head = 0;
  #passed = 0;
  #offset = 0;
  #pendingCR = false;

  /** Feed the next chunk of the stream, in order. */
  observe(chunk: Uint8Array): void {
    const base = this.#offset;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (b === 0x0a) {
        // The `\n` of a `\r\n`: the break already recorded for the `\r` now ends one byte later.
        const afterCR = i === 0 ? this.#pendingCR : chunk[i - 1] === 0x0d;
        if (!afterCR) this.#ends.push(base + i + 1);
        else if (this.#ends.length > this.#head) this.#ends[this.#ends.length - 1] = base + i + 1;
      } else if (b === 0x0d) {
        this.#ends.push(base + i + 1);
      }
    }
    this.#pendingCR = chunk.length > 0 && chunk[chunk.length - 1] === 0x0d;
    this.#offset += chunk.length;
  }

  /** Line of the byte at `offset`. Offsets must not decrease between calls. */
  lineAt(offset: number): number {
    while (this.#head < this.#ends.length && (this.#ends[this.#head] as number) <= offset) {
      this.#head++;
      this.#passed++;
    }
    if (this.#head > 4096) {
      this.#ends = this.#ends.slice(this.#head);
      this.#head = 0;
    }
    return this.#passed + 1;
  }
}
