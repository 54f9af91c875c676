/**
 * Shapes of the Reseller API's responses (spec section 2), as zod schemas.
 * Unknown extra fields are tolerated (the spec says shapes may grow): objects are
 * parsed loosely and the extra fields are dropped from the typed value.
 */
import { z } from 'zod';

/**
 * Spec 2.1: "Element structure of serverIdOptions and regionOptions: not shown."
 * Our choice, in this one place: an option is either a bare string/number, or an object
 * carrying its value in one of `value`, `id`, `code`, `serverId`, `region` and an optional
 * display text in `label` / `name` / `text`. Every form is normalised to { value, label }.
 */
export const OptionSchema = z
  .union([
    z.string(),
    z.number(),
    z.looseObject({
      value: z.union([z.string(), z.number()]).optional(),
      id: z.union([z.string(), z.number()]).optional(),
      code: z.union([z.string(), z.number()]).optional(),
      serverId: z.union([z.string(), z.number()]).optional(),
      region: z.union([z.string(), z.number()]).optional(),
      label: z.string().optional(),
      name: z.string().optional(),
      text: z.string().optional(),
    }),
  ])
  .transform((o, ctx) => {
    if (typeof o === 'string' || typeof o === 'number') return { value: String(o), label: String(o) };
    const value = o.value ?? o.id ?? o.code ?? o.serverId ?? o.region;
    if (value === undefined) {
      ctx.addIssue({ code: 'custom', message: 'option has no value/id/code field' });
      return z.NEVER;
    }
    return { value: String(value), label: o.label ?? o.name ?? o.text ?? String(value) };
  });
export type Option = z.output<typeof OptionSchema>;

export const RequiredFieldSchema = z.looseObject({
  field: z.string(),
  label: z.string().optional().default(''),
});

export const ServiceLineSchema = z.looseObject({
  productName: z.string(),
  slug: z.string(),
  gameName: z.string(),
  required: z.array(RequiredFieldSchema).default([]),
  status: z.string(),
  serverIdOptions: z.array(OptionSchema).optional(),
  regionOptions: z.array(OptionSchema).optional(),
});
export type ServiceLine = z.output<typeof ServiceLineSchema>;

export const ProductSchema = z.looseObject({
  id: z.union([z.string(), z.number()]).transform(String),
  slug: z.string(),
  gameName: z.string(),
  serviceName: z.string(),
  category: z.string(),
  price: z.number(),
  status: z.string(),
  quantity: z.number().int().optional(),
  inStock: z.boolean().optional(),
  quantityMin: z.number().int().optional(),
  quantityMax: z.number().int().optional(),
});
export type Product = z.output<typeof ProductSchema>;

export const OrderStatusSchema = z.enum(['processing', 'completed', 'cancelled']);
export type OrderStatus = z.output<typeof OrderStatusSchema>;

export const OrderSchema = z.looseObject({
  orderCreated: z.boolean().optional(),
  orderId: z.union([z.string(), z.number()]).transform(String).optional(),
  status: OrderStatusSchema,
  game: z.string().optional(),
  packName: z.string().optional(),
  amountUsd: z.number().optional(),
  durationSec: z.number().optional(),
  userId: z.string().optional(),
  serverId: z.string().optional(),
  moreId: z.string().optional(),
  codes: z.array(z.string()).optional(),
  error: z.string().optional(),
  refunded: z.boolean().optional(),
  idempotentReplay: z.boolean().optional(),
  // Not in the spec's field table, but sensible for a service to echo; kept when present
  // because history reconciliation matches on them.
  trxid: z.string().optional(),
  pid: z.union([z.string(), z.number()]).transform(String).optional(),
  createdAt: z.union([z.string(), z.number()]).optional(),
});
export type Order = z.output<typeof OrderSchema>;

/** A placed order always has an id: the client refuses a 200 submit without one. */
export type PlacedOrder = Order & { orderId: string };

export const ServicesResponseSchema = z.looseObject({ success: z.literal(true), services: z.array(ServiceLineSchema) });
export const ProductsResponseSchema = z.looseObject({ success: z.literal(true), products: z.array(ProductSchema) });
export const MyIpResponseSchema = z.looseObject({ success: z.literal(true), ip: z.string() });
export const BalanceResponseSchema = z.looseObject({
  success: z.literal(true),
  balanceUsd: z.number(),
  currency: z.string(),
});
export type Balance = z.output<typeof BalanceResponseSchema>;

export const HistoryResponseSchema = z.looseObject({
  success: z.literal(true),
  count: z.number().int(),
  orders: z.array(OrderSchema),
  total: z.number().int().optional(),
  hasMore: z.boolean().optional(),
});
export type History = z.output<typeof HistoryResponseSchema>;

/** Body of POST /orders (spec 4.5). Field names are the canonical ones, never the aliases. */
export interface OrderRequest {
  pid: string;
  trxid: string;
  userId?: string;
  zoneId?: string;
  serverId?: string;
  region?: string;
  moreId?: string;
  quantity?: number;
}

/** Failure bodies (spec section 7): `{ success:false, code?, error }` or the submit-rejection shape. */
export const FailureBodySchema = z.looseObject({
  success: z.boolean().optional(),
  code: z.string().optional(),
  error: z.string().optional(),
  orderCreated: z.boolean().optional(),
  status: z.string().optional(),
  game: z.string().optional(),
});
export type FailureBody = z.output<typeof FailureBodySchema>;
