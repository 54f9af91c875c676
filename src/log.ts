/**
 * The root pino logger. JSON lines on stdout (for journald); human-readable when stdout is a
 * terminal. Two layers keep secrets out:
 *  1. pino `redact` removes the fields that may hold the key or delivered codes;
 *  2. every serialized line is scrubbed of the literal API key before it is written, so even
 *     a key that slipped into a free-text message never reaches the log.
 */
import { pino, type Logger, type DestinationStream } from 'pino';
import pretty from 'pino-pretty';

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
  destination?: DestinationStream;
  pretty?: boolean;
}

export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[REDACTED]');
  return out;
}

export function createLogger(opts: LogOptions): Logger {
  const secrets = opts.secrets.filter((s) => s.length >= 4);
  const usePretty = opts.pretty ?? (opts.destination === undefined && process.stdout.isTTY === true);
  const destination: DestinationStream =
    opts.destination ?? (usePretty ? pretty({ sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss' }) : pino.destination({ dest: 1, sync: true }));
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
