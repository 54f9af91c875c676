/**
 * The root pino logger. JSON lines (for journald and log files) unless a person reads them: on a
 * terminal every entry is ONE readable line (textDestination), never JSON and never a block of
 * indented fields. Two layers keep secrets out:
 *  1. pino `redact` removes the fields that may hold the key or delivered codes;
 *  2. every serialized line is scrubbed of the literal API key before it is written, so even
 *     a key that slipped into a free-text message never reaches the log. The text form is made
 *     from that scrubbed line, so it inherits both layers.
 */
import { systemClock } from './clock.js';
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

const REDACT_PATHS = [
  'apiKey',
  '*.apiKey',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  'codes',
  '*.codes',
  '*.*.codes',
  'botToken',
  '*.botToken',
];

export interface LogOptions {
  level: string;
  /** Literal secrets to scrub from every line (the API key, a bot token). */
  secrets: readonly string[];
  /** Added to every line: `{ mode: 'SANDBOX' }` when running against the built-in sandbox. */
  base?: Record<string, unknown>;
  /** Where lines go; by default JSON on stdout, or one text line per entry when stdout is a terminal. */
  destination?: DestinationStream;
}

export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[REDACTED]');
  return out;
}

export function createLogger(opts: LogOptions): Logger {
  const secrets = opts.secrets.filter((s) => s.length >= 4);
  const destination: DestinationStream =
    opts.destination ?? (process.stdout.isTTY === true ? textDestination(process.stdout, { time: true }) : pino.destination({ dest: 1, sync: true }));
  return pino(
    {
      level: opts.level,
      base: { pid: process.pid, ...opts.base },
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      hooks: secrets.length > 0 ? { streamWrite: (line: string) => scrub(line, secrets) } : {},
      serializers: { err: pino.stdSerializers.err },
    },
    destination,
  );
}

/** A logger that writes nothing, for library use and tests that do not read logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/** Fields every line carries that a person reading a terminal does not need. */
const QUIET_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'mode', 'component', 'err']);
const LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warning', 50: 'error', 60: 'fatal' };

function fieldText(v: unknown): string {
  if (typeof v === 'string') return v;
  return JSON.stringify(v) ?? String(v);
}

/**
 * One log entry (a serialized pino line) as one sentence: the message, then its fields in
 * parentheses. `time`: the daemon's lines start with the time and the level (a terminal it runs
 * in scrolls for hours); a command's lines are read at once, so only warnings and errors say what
 * they are. Never more than one line: newlines inside a message become spaces.
 */
export function textLine(json: string, opts: { time: boolean }): string {
  let e: Record<string, unknown>;
  try {
    e = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.trimEnd();
  }
  const level = LEVELS[Number(e.level)] ?? 'info';
  const fields = Object.entries(e)
    .filter(([k, v]) => !QUIET_FIELDS.has(k) && v !== undefined)
    .map(([k, v]) => `${k}: ${fieldText(v)}`);
  const err = e.err && typeof e.err === 'object' ? (e.err as { message?: unknown }).message : e.err;
  if (err !== undefined && err !== null) fields.push(`error: ${fieldText(err)}`);
  const msg = `${typeof e.msg === 'string' ? e.msg : ''}${fields.length > 0 ? ` (${fields.join(', ')})` : ''}`.replace(/\s*\n\s*/g, ' ');
  if (!opts.time) return level === 'info' || level === 'debug' || level === 'trace' ? msg : `${level}: ${msg}`;
  const at = new Date(typeof e.time === 'number' ? e.time : systemClock.now());
  // UTC, and said: every other time topup writes (store, results, JSON logs) is UTC, and a bare
  // 14:03:15 reads as the machine's local time.
  const hms = [at.getUTCHours(), at.getUTCMinutes(), at.getUTCSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
  const tag = e.mode === 'SANDBOX' ? ' SANDBOX' : '';
  return `${hms} UTC ${level.toUpperCase().padEnd(7)}${tag} ${msg}`;
}

/**
 * A line redrawn in place at the bottom of the terminal (the submit progress line). A log entry
 * written while it shows would be glued to its end; so the entry clears it first and it is drawn
 * again below the entry.
 */
export interface LiveLine {
  clear(): void;
  redraw(): void;
}
let liveLine: LiveLine | null = null;
export function setLiveLine(line: LiveLine | null): void {
  liveLine = line;
}

/** A pino destination writing each entry as one text line (textLine) to `out`, synchronously. */
export function textDestination(out: NodeJS.WritableStream | { write(s: string): unknown }, opts: { time: boolean }): DestinationStream {
  return {
    write: (line: string) => {
      const live = liveLine;
      live?.clear();
      out.write(`${textLine(line, opts)}\n`);
      live?.redraw();
    },
  };
}
