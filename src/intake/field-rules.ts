/**
 * Checks on single cell values. Each returns a reason in plain English, or undefined when the
 * value is fine. Values arrive trimmed.
 */
import type { Option } from '../api/schemas.js';
import { isWellFormed, NOT_WELL_FORMED } from '../kernel/identity.js';

export const SPREADSHEET_HINT = 'the spreadsheet turned this id into a number; format the column as Text and re-export';

/**
 * Digits a spreadsheet turned into a number and wrote back in a number format, in any locale.
 * The true id is lost (or at least not certain), so it is never guessed at:
 *  - scientific notation with a decimal point or comma: `1.23457E+11`, `1,23457E+11`, `5E+9`;
 *  - a whole number with zero decimals after a point or comma: `123456.0`, `123456789,0`, `2001,00`.
 * A non-zero fraction (`123.5`) is not a number format's doing, so it is left to the other rules.
 */
export function spreadsheetMangled(value: string): boolean {
  return /^[+-]?\d+([.,]\d+)?e[+-]?\d+$/i.test(value) || /^\d+[.,]0+$/.test(value);
}

const MAX_ID_LENGTH = 100;

/** Thousands separators spreadsheets write: comma, point, apostrophe (Swiss), space, no-break and thin spaces. */
const GROUP = "[,.'\u2019 \u00a0\u202f\u2009]";
const GROUPED = new RegExp(`^\\d{1,3}(?:(${GROUP})\\d{3})(?:\\1\\d{3})*(?:[.,]0+)?$`);
/** Indian grouping (en-IN): `5,12,34,56,789`, the last group of three, the others of two. */
const LAKH = /^\d{1,2}(?:,\d{2})+,\d{3}(?:\.0+)?$/;

/**
 * `5,123,456,789`, `5.123.456.789`, `5 123 456 789` (also with no-break or thin spaces),
 * `5'123'456'789`, `5,12,34,56,789`, and any of these with zero decimals (`1.234.567,00`):
 * digits a spreadsheet grouped. One group with a point (`1.234`) is left alone: it may be a
 * decimal, and the other rules judge it.
 */
export function thousandsGrouped(value: string): boolean {
  const m = GROUPED.exec(value);
  if (m) return m[1] !== '.' || value.split('.').length > 2 || /,0+$/.test(value);
  return LAKH.test(value);
}

/** The reason for an id a spreadsheet's number format changed, or undefined. */
export function numberFormatDamage(value: string): string | undefined {
  if (spreadsheetMangled(value)) return `"${value}": ${SPREADSHEET_HINT}`;
  if (thousandsGrouped(value)) return `"${value}": the spreadsheet grouped this id's digits; format the column as Text and re-export`;
  return undefined;
}

const FORMULA_START = /^[=+\-@]/;

/**
 * Ids that pass every check below at a glance: all digits (no `e`, `.` or `,` a spreadsheet
 * could have added), or a letter or `_` followed by word characters and `-`. Almost every id
 * in a real file is one of these, so the full checks only run for the rest (intake speed).
 */
const PLAIN_ID = /^(?:\d{1,100}|[A-Za-z_][\w-]{0,99})$/;

/**
 * A plain identifier: no spaces or control characters inside, not reformatted by a spreadsheet,
 * and not a formula. Ids are never a formula: a cell starting with = + - @ is one a spreadsheet
 * computed or would compute, and sending it would order for a player that does not exist.
 */
export function idProblem(value: string): string | undefined {
  return PLAIN_ID.test(value) ? undefined : idProblemInFull(value);
}

/** Every check of idProblem, without the fast path (exported so a test can hold the two equal). */
export function idProblemInFull(value: string): string | undefined {
  if (!isWellFormed(value)) return NOT_WELL_FORMED;
  const damage = numberFormatDamage(value);
  if (damage) return damage;
  if (FORMULA_START.test(value)) return `"${value}" looks like a spreadsheet formula, not an id`;
  if (/^['\u2019]/.test(value)) return `"${value}" starts with an apostrophe (a spreadsheet's mark for text); remove it`;
  if (/\s/.test(value)) return `"${value}" contains spaces; an id is written without them`;
  // Also zero-width and direction marks (format characters), which an id copied from a chat keeps.
  if (/[\u0000-\u001f\u007f\p{Cf}]/u.test(value)) return 'contains invisible control characters';
  if (value.length > MAX_ID_LENGTH) return `is longer than ${MAX_ID_LENGTH} characters`;
  return undefined;
}

const FREE_FIRE_ID = /^\d{5,20}$/;

/** Free Fire lines (`ff…`): 5–20 digits. */
export function freeFireIdProblem(value: string): string | undefined {
  if (FREE_FIRE_ID.test(value)) return undefined;
  const damage = numberFormatDamage(value);
  if (damage) return damage;
  return `must be 5–20 digits (got "${value}")`;
}

/** A name of 3–16 ASCII word characters or inner spaces, `#`, a tag of 3–5 ASCII letters or digits: passes every rule below. */
const PLAIN_RIOT_ID = /^[A-Za-z0-9_][A-Za-z0-9_ ]{1,14}[A-Za-z0-9_]#[A-Za-z0-9]{3,5}$/;

/** Riot's rules: a game name of 3–16 characters, `#`, a tag of 3–5 letters or digits. */
export function riotIdProblem(value: string): string | undefined {
  return PLAIN_RIOT_ID.test(value) ? undefined : riotIdProblemInFull(value);
}

/** Every check of riotIdProblem, without the fast path (exported so a test can hold the two equal). */
export function riotIdProblemInFull(value: string): string | undefined {
  if (!isWellFormed(value)) return NOT_WELL_FORMED;
  if (FORMULA_START.test(value)) return `"${value}" looks like a spreadsheet formula, not a Riot ID`;
  const m = /^(.+)#(.*)$/.exec(value);
  if (!m) return `must be a Riot ID, name#tag (e.g. Player#EUW); got "${value}"`;
  const name = (m[1] as string).trim();
  const tag = m[2] as string;
  if (name.length < 3 || name.length > 16 || name.includes('#')) return `the name before # must be 3–16 characters (got "${name}")`;
  if (!/^[\p{L}\p{N}]{3,5}$/u.test(tag)) return `the tag after # must be 3–5 letters or digits (got "${tag}")`;
  return undefined;
}

const DIGITS_ID = /^\d{1,20}$/;

/**
 * Games whose player ids are digits and nothing else: Mobile Legends (user id and zone id) and PUBG
 * Mobile (the player id the supplier's own check takes as `playerId: "5…"`). An id with a letter or
 * a sign in it names no player: sent, it would be refused, or worse, bought for nobody.
 */
export function digitsIdProblem(value: string, game: string): string | undefined {
  if (DIGITS_ID.test(value)) return undefined;
  // What any id is told first (a formula, spaces, a spreadsheet's number format …): the more useful reason.
  const general = idProblemInFull(value);
  if (general) return general;
  if (/^\d+$/.test(value)) return `a ${game} id is at most 20 digits (got ${value.length})`;
  return `a ${game} id is digits only (got "${value}")`;
}

const ZONE_ID = DIGITS_ID;

export function zoneIdProblem(value: string): string | undefined {
  if (ZONE_ID.test(value)) return undefined;
  const damage = numberFormatDamage(value);
  if (damage) return damage;
  return `must be a number, digits only (got "${value}")`;
}

/**
 * Mobile Legends players write their id and zone together as `777888999 (2005)`; also without
 * the space, with square or full-width brackets. Only bracketed forms: `777888999 2005` could as
 * well be grouped digits, so it stays refused.
 */
const ML_COMBINED = /^(\d{1,20})\s*[(\[\uff08]\s*(\d{1,10})\s*[)\]\uff09]$/;

/** The id and zone of a combined ML id, or undefined when the value is not one. */
export function splitMlId(value: string): { userId: string; zoneId: string } | undefined {
  const m = ML_COMBINED.exec(value);
  return m ? { userId: m[1] as string, zoneId: m[2] as string } : undefined;
}

/** Finds the listed option by value or label, case-insensitively; returns the value to send. */
export function matchOption(value: string, options: readonly Option[]): string | undefined {
  const lower = value.toLowerCase();
  return (options.find((o) => o.value === value) ?? options.find((o) => o.value.toLowerCase() === lower || o.label.toLowerCase() === lower))
    ?.value;
}

export function optionList(options: readonly Option[]): string {
  const shown = options.slice(0, 12).map((o) => (o.label && o.label !== o.value ? `${o.value} (${o.label})` : o.value));
  return shown.join(', ') + (options.length > shown.length ? `, … (${options.length} in all)` : '');
}

/** A whole number written with digits only; anything else (1.5, -1, ten, 1e2) is refused. */
export function parseWholeNumber(value: string): number | undefined {
  return /^\d{1,9}$/.test(value) ? Number(value) : undefined;
}

/** USD amount: `1.50`, `1,50` (decimal comma) or `$1.50`; no thousands separators. */
export function parseUsd(value: string): number | undefined {
  const m = /^\$?\s*(\d{1,9})(?:[.,](\d{1,6}))?$/.exec(value);
  if (!m) return undefined;
  return Number(`${m[1]}.${m[2] ?? '0'}`);
}


