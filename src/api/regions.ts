/**
 * Region shortcuts for region + server lines (spec 4.5: "for oncehuman also accepts region
 * shortcuts (such as eu, na)"). The spec lists only `eu` and `na`; the rest are the
 * usual abbreviations. One table, shared by validation and the sandbox, so the two agree.
 * Keys are lower-case shortcuts; values are the canonical region names the catalog lists.
 */
export const REGION_SHORTCUTS: Readonly<Record<string, string>> = Object.freeze({
  eu: 'Europe',
  na: 'North America',
  sa: 'South America',
  asia: 'Asia',
  sea: 'Southeast Asia',
  me: 'Middle East',
  oce: 'Oceania',
});

/**
 * Resolves a user-given region against a line's options: an exact option value, an option
 * value or label compared case-insensitively, or a known shortcut. Returns the option value,
 * or undefined when nothing matches.
 */
export function resolveRegion(given: string, options: readonly { value: string; label: string }[]): string | undefined {
  const g = given.trim();
  const lower = g.toLowerCase();
  const direct = options.find((o) => o.value === g) ??
    options.find((o) => o.value.toLowerCase() === lower || o.label.toLowerCase() === lower);
  if (direct) return direct.value;
  const expanded = REGION_SHORTCUTS[lower];
  if (expanded === undefined) return undefined;
  return options.find((o) => o.value.toLowerCase() === expanded.toLowerCase() || o.label.toLowerCase() === expanded.toLowerCase())?.value;
}
