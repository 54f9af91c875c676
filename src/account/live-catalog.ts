/**
 * The live catalog (GET /services + GET /products), fetched through the rate scheduler and
 * kept for at most `maxAgeMs`. Validation reads it when a batch is loaded; the sender reads
 * it again before each order that carries a maxPriceUsd, since prices move during a long batch.
 */
import type { ResellerClient } from '../api/client.js';
import { Priority } from '../api/client.js';
import { buildCatalogIndex, type CatalogIndex } from '../intake/catalog-index.js';
import { systemClock, type Clock } from '../kernel/clock.js';

export interface CatalogSnapshot {
  index: CatalogIndex;
  fetchedAt: number;
}

export class LiveCatalog {
  readonly #client: ResellerClient;
  readonly #maxAgeMs: number;
  /** Ages the snapshot (wall time: fetchedAt is shown to people). */
  readonly #clock: Clock;
  #snapshot: CatalogSnapshot | undefined;
  #inflight: Promise<CatalogSnapshot> | undefined;

  constructor(client: ResellerClient, maxAgeMs: number, clock: Clock = systemClock) {
    this.#client = client;
    this.#maxAgeMs = maxAgeMs;
    this.#clock = clock;
  }

  /** The cached catalog if fresh enough, else a new one (one fetch at a time; `priority` in the rate gate if this call starts it). */
  async get(maxAgeMs = this.#maxAgeMs, priority: number = Priority.lookup): Promise<CatalogSnapshot> {
    const s = this.#snapshot;
    if (s && this.#clock.now() - s.fetchedAt <= maxAgeMs) return s;
    this.#inflight ??= this.#fetch(priority).finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  /** The last catalog held, however old, without a call. */
  get cached(): CatalogSnapshot | undefined {
    return this.#snapshot;
  }

  /**
   * The catalog's names for a row's game, for comparing an answer's `game` with the row
   * (dispatch/order-match.ts): from the catalog held, without a call; [] when it does not know the pack.
   */
  gameNamesOf(row: { productId: string | null }): string[] {
    const entry = row.productId === null ? undefined : this.#snapshot?.index.byPid(row.productId);
    return entry ? [entry.product.gameName, ...(entry.line ? [entry.line.gameName, entry.line.productName] : [])] : [];
  }

  async #fetch(priority: number): Promise<CatalogSnapshot> {
    const [services, products] = await Promise.all([
      this.#client.services({ priority }),
      this.#client.products({ priority }),
    ]);
    this.#snapshot = { index: buildCatalogIndex(services, products), fetchedAt: this.#clock.now() };
    return this.#snapshot;
  }
}
