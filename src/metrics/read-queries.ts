/** The aggregates read off the daemon's thread (read-worker.ts), by name. */
export const READ_QUERIES = {
  rowsByState: 'SELECT state, count(*) AS n FROM rows GROUP BY state',
} as const;

export type ReadQuery = keyof typeof READ_QUERIES;
