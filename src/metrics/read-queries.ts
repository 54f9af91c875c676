/** The aggregates read off the daemon's thread (read-worker.ts), by name. */
export const READ_QUERIES = {
  rowsByState: 'SELECT state, count(*) AS n FROM rows GROUP BY state',
  // Every webhook event ever written is counted (delivered ones are kept: the feed lists them).
  webhookEventsByDelivery: 'SELECT delivery, count(*) AS n FROM order_events GROUP BY delivery',
} as const;

export type ReadQuery = keyof typeof READ_QUERIES;
