/**
 * JSON as suppliers really send it, parsed without losing anything money depends on.
 *
 * Order ids are often numbers in the JSON text, and some deployments use 64-bit ids
 * (19-digit "snowflake" ids). JSON.parse turns 1234567890123456789 into 1234567890123456800,
 * another order's id. So before parsing, every integer literal with more than 15 digits outside
 * a string is wrapped in quotes: it reaches the readers as the exact digits. 15 digits always fit
 * a double exactly; amounts and counts never need more. Fractions and exponents are left alone.
 *
 * A UTF-8 BOM before the body (seen from some PHP stacks) is dropped.
 */

const SAFE_DIGITS = 15;

/** Parses `text` as JSON with big integers kept exact as strings. Throws SyntaxError like JSON.parse. */
export function parseJsonExact(text: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return JSON.parse(needsQuoting(body) ? quoteBigIntegers(body) : body);
}

/** Quick test: is there any run of 16+ digits at all? Almost no answer has one. */
function needsQuoting(text: string): boolean {
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (++run > SAFE_DIGITS) return true;
    } else run = 0;
  }
  return false;
}

/**
 * One pass over the text, tracking whether we are inside a string (with escapes), quoting
 * integer tokens longer than SAFE_DIGITS digits. Invalid JSON stays invalid: JSON.parse judges.
 */
function quoteBigIntegers(text: string): string {
  let out = '';
  let from = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === '"') {
      // Skip the string, escapes included.
      i++;
      while (i < n && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
      continue;
    }
    if (c === '-' || (c >= '0' && c <= '9')) {
      const start = i;
      if (c === '-') i++;
      while (i < n && text[i]! >= '0' && text[i]! <= '9') i++;
      const digits = i - start - (c === '-' ? 1 : 0);
      const next = text[i];
      const isInteger = next !== '.' && next !== 'e' && next !== 'E';
      if (isInteger && digits > SAFE_DIGITS) {
        out += `${text.slice(from, start)}"${text.slice(start, i)}"`;
        from = i;
      }
      // A fraction or exponent: skip the rest of the number token.
      while (i < n && /[0-9.eE+-]/.test(text[i]!)) i++;
      continue;
    }
    i++;
  }
  return from === 0 ? text : out + text.slice(from);
}
