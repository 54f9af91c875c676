/**
 * systemd's EnvironmentFile= rules, for the operator's `topup` wrapper (deploy/topup-cli.sh), so a
 * command run by hand sees exactly the settings the service sees. A shell (`. topup.env`) reads the
 * same file differently: it expands `*` and `$`, splits on spaces, runs `$(…)`, so a valid line such
 * as a cron schedule of every six hours fails there (the shell tries to run a glob) and is lost.
 *
 * The rules, as systemd's env-file.c applies them (parse_env_file_internal):
 * - a line is `KEY=VALUE`; white space around the key and before the value is dropped, and at the
 *   end of an unquoted value too;
 * - a line starting (after white space) with `#` or `;` is a comment; a line without `=` is ignored;
 * - `'…'` keeps everything literally; `"…"` keeps everything but `\"`, `\\`, `\``, `\$` (the
 *   backslash dropped) and backslash-newline (both dropped); other backslashes stay;
 * - unquoted, a backslash takes the next character literally, and backslash-newline continues the
 *   line; quoted parts and unquoted parts run together (`A="x y"z` is `x yz`);
 * - no expansion of any kind: `$HOME`, `*`, `~`, `$(…)` are kept as written;
 * - a key that is not a valid variable name is ignored (systemd logs "Ignoring invalid environment
 *   assignment"): we return it so the caller can say so; later lines win over earlier ones.
 */

export interface EnvironmentFile {
  vars: Record<string, string>;
  /** Assignments systemd ignores, as `line N: KEY` (never the value: it may be a secret). */
  ignored: string[];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const WHITE = new Set([' ', '\t', '\r', '\n', '\v', '\f']);
/** systemd ends a line at either (NEWLINE in its sources), so a CRLF file reads as meant. */
const NEWLINE = new Set(['\n', '\r']);
const ESCAPED_IN_DOUBLE = new Set(['"', '\\', '`', '$']);

type State = 'preKey' | 'key' | 'preValue' | 'value' | 'valueEscape' | 'single' | 'double' | 'doubleEscape' | 'comment' | 'commentEscape';

export function parseEnvironmentFile(text: string): EnvironmentFile {
  const vars: Record<string, string> = {};
  const ignored: string[] = [];
  let state: State = 'preKey';
  let key = '';
  let value = '';
  // Trailing white space of an unquoted value is dropped; quoted white space is kept.
  let keepTo = 0;
  let line = 1;
  let keyLine = 1;

  const push = (): void => {
    const k = key.trimEnd();
    const v = value.slice(0, keepTo);
    if (NAME.test(k)) vars[k] = v;
    else ignored.push(`line ${keyLine}: ${k.slice(0, 40)}`);
    key = '';
    value = '';
    keepTo = 0;
  };

  for (const c of text) {
    switch (state) {
      case 'preKey':
        if (c === '#' || c === ';') state = 'comment';
        else if (!WHITE.has(c)) {
          state = 'key';
          key = c;
          keyLine = line;
        }
        break;
      case 'key':
        if (NEWLINE.has(c)) {
          // No `=`: not an assignment; systemd skips it.
          state = 'preKey';
          key = '';
        } else if (c === '=') {
          state = 'preValue';
        } else key += c;
        break;
      case 'preValue':
      case 'value':
        if (NEWLINE.has(c)) {
          push();
          state = 'preKey';
        } else if (state === 'preValue' && WHITE.has(c)) {
          // white space before the value (or after a quoted part) is dropped
        } else if (state === 'preValue' && c === "'") state = 'single';
        else if (state === 'preValue' && c === '"') state = 'double';
        // Inside an unquoted value a quote is an ordinary character (A=x"y" is x"y").
        else if (c === '\\') state = 'valueEscape';
        else {
          value += c;
          state = 'value';
          if (!WHITE.has(c)) keepTo = value.length;
        }
        break;
      case 'valueEscape':
        state = 'value';
        if (!NEWLINE.has(c)) {
          value += c;
          keepTo = value.length;
        }
        break;
      case 'single':
        if (c === "'") state = 'preValue';
        else value += c;
        keepTo = value.length;
        break;
      case 'double':
        if (c === '"') state = 'preValue';
        else if (c === '\\') state = 'doubleEscape';
        else value += c;
        keepTo = value.length;
        break;
      case 'doubleEscape':
        state = 'double';
        if (ESCAPED_IN_DOUBLE.has(c)) value += c;
        else if (c !== '\n') value += `\\${c}`;
        keepTo = value.length;
        break;
      case 'comment':
        if (c === '\\') state = 'commentEscape';
        else if (NEWLINE.has(c)) state = 'preKey';
        break;
      case 'commentEscape':
        state = 'comment';
        break;
    }
    if (c === '\n') line += 1;
  }
  // The last line may lack its newline; an unclosed quote takes what was read (as systemd does).
  if (state !== 'preKey' && state !== 'key' && state !== 'comment' && state !== 'commentEscape') push();
  return { vars, ignored };
}
