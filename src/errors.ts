/**
 * Every failure in topup-runner is a `TopupError` with a stable `code`.
 * Code elsewhere decides on `code` (and, for API failures, on `classification`),
 * never on message text.
 */

export const ErrorCode = {
  Config: 'E_CONFIG',
  Api: 'E_API',
  ApiResponseShape: 'E_API_RESPONSE_SHAPE',
  Usage: 'E_USAGE',
  NotFound: 'E_NOT_FOUND',
  BatchLocked: 'E_BATCH_LOCKED',
  InputFile: 'E_INPUT_FILE',
  Store: 'E_STORE',
  Internal: 'E_INTERNAL',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export class TopupError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TopupError';
    this.code = code;
  }
}

/** A setting that cannot be used. `setting` names it as the user wrote it (e.g. TOPUP_RATE_LIMITS). */
export class ConfigError extends TopupError {
  readonly setting: string;
  constructor(setting: string, problem: string) {
    super(ErrorCode.Config, `${setting}: ${problem}`);
    this.name = 'ConfigError';
    this.setting = setting;
  }
}

export class UsageError extends TopupError {
  constructor(message: string) {
    super(ErrorCode.Usage, message);
    this.name = 'UsageError';
  }
}

export class NotFoundError extends TopupError {
  constructor(message: string) {
    super(ErrorCode.NotFound, message);
    this.name = 'NotFoundError';
  }
}

export class InputFileError extends TopupError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.InputFile, message, options);
    this.name = 'InputFileError';
  }
}

/**
 * What the rest of the program does with a failed API call. Exactly one per failure.
 *  - rejected:    the API refused the order and created nothing.
 *  - account:     the key or the account cannot send now; stop sending everywhere.
 *  - forbidden:   the trxid belongs to another account.
 *  - retry-later: send the very same request again later (honour retryAfterMs).
 *  - ambiguous:   the order may or may not exist; only resending the same trxid can tell.
 *  - not-found:   GET /orders/:id answered ORDER NOT FOUND.
 */
export type Classification = 'rejected' | 'account' | 'forbidden' | 'retry-later' | 'ambiguous' | 'not-found';

export interface ApiErrorInit {
  classification: Classification;
  method: string;
  path: string;
  status?: number | undefined;
  apiCode?: string | undefined;
  apiError?: string | undefined;
  retryAfterMs?: number | undefined;
  /** The parsed body, when there was one. Never holds the request, so never the key. */
  body?: unknown;
  cause?: unknown;
  detail?: string;
}

export class ApiError extends TopupError {
  readonly classification: Classification;
  readonly method: string;
  readonly path: string;
  readonly status: number | undefined;
  readonly apiCode: string | undefined;
  readonly apiError: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly body: unknown;

  constructor(init: ApiErrorInit) {
    const what = init.apiCode ?? init.apiError ?? init.detail ?? 'request failed';
    const status = init.status === undefined ? 'no response' : `HTTP ${init.status}`;
    super(ErrorCode.Api, `${init.method} ${init.path}: ${status} ${what} (${init.classification})`, {
      cause: init.cause,
    });
    this.name = 'ApiError';
    this.classification = init.classification;
    this.method = init.method;
    this.path = init.path;
    this.status = init.status;
    this.apiCode = init.apiCode;
    this.apiError = init.apiError;
    this.retryAfterMs = init.retryAfterMs;
    this.body = init.body;
  }

  /** The API's own words, for result files and operators: code first, then error text. */
  get reason(): string {
    if (this.apiError && this.apiCode && this.apiError !== this.apiCode) return `${this.apiCode}: ${this.apiError}`;
    return this.apiCode ?? this.apiError ?? this.message;
  }
}

/** A 200 whose body does not have the shape the spec promises. */
export class ApiResponseShapeError extends TopupError {
  readonly path: string;
  readonly issues: string;
  constructor(path: string, issues: string) {
    super(ErrorCode.ApiResponseShape, `${path}: response does not match the API specification: ${issues}`);
    this.name = 'ApiResponseShapeError';
    this.path = path;
    this.issues = issues;
  }
}

export class BatchLockedError extends TopupError {
  constructor(batchId: string, owner: string) {
    super(ErrorCode.BatchLocked, `batch ${batchId} is being run by another process (${owner})`);
    this.name = 'BatchLockedError';
  }
}

/** Turns anything thrown into a TopupError, keeping the original as `cause`. */
export function coerceError(err: unknown): TopupError {
  if (err instanceof TopupError) return err;
  if (err instanceof Error) return new TopupError(ErrorCode.Internal, err.message, { cause: err });
  return new TopupError(ErrorCode.Internal, String(err));
}

export function isApiError(err: unknown, classification?: Classification): err is ApiError {
  return err instanceof ApiError && (classification === undefined || err.classification === classification);
}
