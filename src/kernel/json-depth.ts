/**
 * How deeply a JSON value nests, found without recursion: a value parsed from a request (an order's
 * `meta`) may nest thousands of levels, and walking it recursively (JSON.stringify, a canonical
 * hash) overflows the stack (an adversarial review: a 10 KB body answered 500).
 */
/** The deepest nesting of `v` (0 for a scalar); stops counting once past `stopAt`. */
export function jsonDepth(v: unknown, stopAt = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const stack: { v: unknown; d: number }[] = [{ v, d: 0 }];
  while (stack.length > 0) {
    const { v: x, d } = stack.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (d + 1 > deepest) deepest = d + 1;
    if (deepest > stopAt) return deepest;
    for (const child of Object.values(x as Record<string, unknown>)) stack.push({ v: child, d: d + 1 });
  }
  return deepest;
}

