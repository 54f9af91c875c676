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
  /** A backup could not be taken, or a backup to restore does not verify (store/backup.ts). */
  Backup: 'E_BACKUP',
  /** Replication or a takeover cannot work: no litestream binary, a replica that cannot be read or restored (standby/). */
  Standby: 'E_STANDBY',
  /** This home was taken over by another node (the fence names it): it must not send (standby/fence.ts). */
  Fenced: 'E_FENCED',
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
 * What the rest of the program does with a failed API call. Exactly one per failure; the table
 * that picks it is api/classify.ts, the only place that reads the API's codes and texts.
 *  - rejected:             the API refused the order and created nothing.
 *  - insufficient-balance: refused for balance; nothing created; the batch waits for a top-up.
 *  - duplicate-trxid:      refused because the trxid was already used: an order with it may
 *                          exist, so history decides; never read as "nothing charged".
 *  - account:              the key, the account or the URL cannot work now; stop everywhere.
 *  - forbidden:            the trxid belongs to another account.
 *  - paused:               orders are paused for everyone (maintenance); polls go on.
 *  - retry-later:          send the very same request again later (honour retryAfterMs).
 *  - ambiguous:            the order may or may not exist; only resending the same trxid can tell.
 *  - not-found:            GET /orders/:id (or /history) answered that it does not exist.
 */
export type Classification =
  | 'rejected'
  | 'insufficient-balance'
  | 'duplicate-trxid'
  | 'account'
  | 'forbidden'
  | 'paused'
  | 'retry-later'
  | 'ambiguous'
  | 'not-found';

/**
 * A copy of what the API answered, kept for operators (`topup order`, review rows): the HTTP
 * status and the body (parsed JSON, or the start of a text/HTML body), with the API key removed.
 * Never used for decisions.
 */
export interface ApiAnswer {
  route: string;
  status: number | undefined;
  at: number;
  body: unknown;
}

export interface ApiErrorInit {
  classification: Classification;
  method: string;
  path: string;
  status?: number | undefined;
  apiCode?: string | undefined;
  apiError?: string | undefined;
  retryAfterMs?: number | undefined;
  /** POST /orders: may an order exist after this answer? Default: only for `ambiguous`. */
  mayExist?: boolean;
  /** The parsed body, when there was one. Never holds the request, so never the key. */
  body?: unknown;
  answer?: ApiAnswer | undefined;
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
  /** POST /orders: true when this answer leaves the order in doubt (it may have been created). */
  readonly mayExist: boolean;
  readonly body: unknown;
  readonly answer: ApiAnswer | undefined;

  constructor(init: ApiErrorInit) {
    // The detail is ours (a redirect's Location, "answer larger than …"): kept beside the API's words.
    const said = init.apiCode ?? init.apiError;
    const what = said !== undefined && init.detail !== undefined ? `${said}; ${init.detail}` : (said ?? init.detail ?? 'request failed');
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
    this.mayExist = init.mayExist ?? init.classification === 'ambiguous';
    this.body = init.body;
    this.answer = init.answer;
  }

  /**
   * The API's code, or the HTTP status when it gave none (`HTTP 401`, `HTTP error` without an
   * answer): the short name a pause, its log line and its notification give the cause.
   */
  get codeOrStatus(): string {
    return this.apiCode ?? `HTTP ${this.status ?? 'error'}`;
  }

  /** The API's own words, for result files and operators: code first, then error text. */
  get reason(): string {
    if (this.apiError && this.apiCode && this.apiError !== this.apiCode) return `${this.apiCode}: ${this.apiError}`;
    return this.apiCode ?? this.apiError ?? this.message;
  }
}

/** A 200 whose body cannot be read as what the route returns (after every tolerance in api/schemas.ts). */
/**
 * A call given up before its request left this process (a stop while it waited out a Retry-After
 * hold): the API cannot have seen it. Distinct from a failed request, which may have been seen.
 */
export class NotDispatchedError extends TopupError {
  constructor(route: string, cause: unknown) {
    super(ErrorCode.Internal, `${route}: stopped before the request left`, { cause });
    this.name = 'NotDispatchedError';
  }
}

export class ApiResponseShapeError extends TopupError {
  readonly path: string;
  readonly issues: string;
  readonly answer: ApiAnswer | undefined;
  /** The order the answer is about, when that is another one than asked for (GET /orders/:id). */
  readonly aboutOrder: string | undefined;
  constructor(path: string, issues: string, answer?: ApiAnswer, aboutOrder?: string) {
    super(ErrorCode.ApiResponseShape, `${path}: answer cannot be read: ${issues}`);
    this.name = 'ApiResponseShapeError';
    this.path = path;
    this.issues = issues;
    this.answer = answer;
    this.aboutOrder = aboutOrder;
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
