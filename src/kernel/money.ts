/** USD amounts: the one rounding to cents used everywhere a figure is stored, shown or compared. */
export function roundCents(usd: number): number {
  return Math.round((usd + Number.EPSILON) * 100) / 100;
}
