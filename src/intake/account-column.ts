/**
 * Which column of a file pins rows to a supplier account. Read by the validator (intake) and by
 * placement and routing (account/): kept in the base layer so the validator imports nothing above it.
 */
/** The header of the column that pins rows to an account (`account`, `supplier account`), if the file has one. */
export function accountColumn(columns: readonly string[]): number | undefined {
  const keys = new Set(['account', 'supplieraccount', 'topupaccount']);
  const i = columns.findIndex((c) => keys.has(c.trim().toLowerCase().replace(/[\s_-]+/g, '')));
  return i >= 0 ? i : undefined;
}
