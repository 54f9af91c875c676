/** Counts as people read them: "1 row", "2 rows"; "line 3", "lines 3, 5". */

/** `n` and the word, in the plural unless n is 1 (every word this program counts takes an s). */
export function counted(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

/** "line 3" or "lines 3, 5": the line numbers, or `text` for them (ranges such as "2-3, 5"). */
export function linesLabel(lines: readonly number[], text = lines.join(', ')): string {
  return `${lines.length === 1 ? 'line' : 'lines'} ${text}`;
}
