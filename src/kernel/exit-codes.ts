/**
 * Exit codes of every topup command; the README's table mirrors this one.
 */
import { ApiError, ApiResponseShapeError, ConfigError, ErrorCode, type TopupError } from './errors.js';

export const ExitCode = {
  /** Done: every row completed / the file is valid and affordable / the check passed. */
  Ok: 0,
  /** Done, but not everything succeeded: some rows did not complete, a file has invalid rows, a check failed. */
  NotAllCompleted: 1,
  /** The command line is wrong. */
  Usage: 2,
  /** A setting is wrong (named in the message). */
  Config: 3,
  /** The API refused or could not be reached (account problem, network, maintenance). */
  Api: 4,
  /** The batch is being run by another process. */
  Locked: 5,
  /** No such batch or order. */
  NotFound: 6,
  /** The input file cannot be read as a CSV. */
  InputFile: 7,
  /** A bug or an unexpected failure (see --verbose). */
  Internal: 70,
  /** Stopped by a second SIGINT/SIGTERM. */
  Interrupted: 130,
} as const;

export function exitCodeFor(err: TopupError): number {
  if (err instanceof ConfigError) return ExitCode.Config;
  if (err instanceof ApiError || err instanceof ApiResponseShapeError) return ExitCode.Api;
  switch (err.code) {
    case ErrorCode.Usage:
      return ExitCode.Usage;
    case ErrorCode.BatchLocked:
      return ExitCode.Locked;
    case ErrorCode.NotFound:
      return ExitCode.NotFound;
    case ErrorCode.InputFile:
      return ExitCode.InputFile;
    case ErrorCode.Config:
      return ExitCode.Config;
    case ErrorCode.Fenced:
      // Another node holds the fence: as "run by another process", and systemd's
      // RestartPreventExitStatus=5 keeps a fenced primary from restarting in a loop.
      return ExitCode.Locked;
    case ErrorCode.Standby:
    case ErrorCode.Backup:
      // A backup that could not be taken or does not verify: a check failed.
      return ExitCode.NotAllCompleted;
    default:
      return ExitCode.Internal;
  }
}
