/**
 * JSON as suppliers really send it, parsed without losing anything money depends on.
 *
 * Order ids are often numbers in the JSON text, and some deployments use 64-bit ids
 * (19-digit "snowflake" ids). JSON.parse turns 1234567890123456789 into 1234567890123456800,
 * another order's id. So before parsing, every integer literal with more than 15 digits outside
 * a string is wrapped in quotes: it reaches the readers as the exact digits. 15 digits always fit
 * a double exactly; amounts and counts never need more. Fractions and exponents are left alone.
 *
 * A UTF-8 BOM before the body (seen from some PHP stacks) is dropped. So are PHP notices printed
 * before the JSON by a server with display_errors on ("<br />\n<b>Deprecated</b>: … on line
 * <b>41</b><br />"): the JSON after them is the real answer. Only looked for when the body does
 * not parse, so the common case pays nothing.
 */

const SAFE_DIGITS = 15;

/** Parses `text` as JSON with big integers kept exact as strings. Throws SyntaxError like JSON.parse. */
export function parseJsonExact(text: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return parseExact(body);
  } catch (err) {
    const rest = afterPhpNotices(body);
    if (rest === undefined) throw err;
    return parseExact(rest);
  }
}

function parseExact(body: string): unknown {
  return JSON.parse(needsQuoting(body) ? quoteBigIntegers(body) : body);
}

/** One PHP notice line, HTML or plain: `<b>Warning</b>:  … in <b>/x.php</b> on line <b>12</b><br />`. */
const PHP_NOTICE = /^\s*(?:<br\s*\/?>\s*)*(?:<b>)?(?:PHP )?(?:Warning|Notice|Deprecated|Strict Standards)(?:<\/b>)?:[^\n]*?\bon line\s*(?:<b>)?\d+(?:<\/b>)?(?:\s*<br\s*\/?>)?/i;

/** The text after the PHP notices it starts with, or undefined when it starts with none. */
function afterPhpNotices(text: string): string | undefined {
  let rest = text;
  for (let m = PHP_NOTICE.exec(rest); m; m = PHP_NOTICE.exec(rest)) rest = rest.slice(m[0].length);
  return rest === text ? undefined : rest;
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
